// A stream player inside the simulated design (sim/simmem.py, "environments";
// docs/architecture.md, "RTL in the loop at simulator speed"). Simulation only: it
// offers the beats ents[head .. n) on one input stream of a unit, in order, one per
// cycle while the unit takes them, so that the testbench hands over a whole
// operation's input through the VPI once instead of stepping every clock cycle.
//
// The testbench writes ents[0 .. k), then n = k and head = 0, with the player idle.
module graphunits_streamplay #(
    parameter W = 8,
    parameter DEPTH_LOG2 = 16
) (
    input clk,
    input rst,
    output valid,
    input ready,
    output [W-1:0] payload,
    output idle
);
    localparam D = 1 << DEPTH_LOG2;
    reg [W-1:0] ents [0:D-1] /*verilator public_flat_rw*/;
    reg [31:0] n /*verilator public_flat_rw*/;
    reg [31:0] head /*verilator public_flat_rw*/;

    assign valid = !rst && head < n;
    assign payload = ents[head[DEPTH_LOG2-1:0]];
    assign idle = head >= n;
    always @(posedge clk) begin
        if (rst) begin
            n <= 32'd0;
            head <= 32'd0;
        end else if (valid && ready) begin
            head <= head + 32'd1;
        end
    end
endmodule
