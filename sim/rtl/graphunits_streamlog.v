// A stream recorder inside the simulated design (sim/simmem.py, "environments";
// docs/architecture.md, "RTL in the loop at simulator speed"). Simulation only: it takes
// every beat offered on one output stream of a unit (ready stays high while the log has
// room) and logs {cycle, payload}, so that the testbench reads a whole operation's
// output through the VPI once instead of stepping every clock cycle.
//
// The testbench reads log[0 .. n) and clears n between operations. Ready stays high: a
// beat that finds the log full is lost and sets the sticky flag full (the testbench
// reports it), so that a too small log never hangs the unit.
module graphunits_streamlog #(
    parameter W = 8,
    parameter DEPTH_LOG2 = 16
) (
    input clk,
    input rst,
    input valid,
    output ready,
    input [W-1:0] payload,
    input [31:0] cycle,
    output reg full /*verilator public_flat_rw*/
);
    localparam D = 1 << DEPTH_LOG2;
    reg [W + 31:0] log [0:D-1] /*verilator public_flat_rw*/;
    reg [31:0] n /*verilator public_flat_rw*/;

    assign ready = !rst;
    always @(posedge clk) begin
        if (rst) begin
            n <= 32'd0;
            full <= 1'b0;
        end else begin
            if (valid && n < D) begin
                log[n[DEPTH_LOG2-1:0]] <= {payload, cycle};
                n <= n + 32'd1;
            end
            if (valid && n >= D) full <= 1'b1;
        end
    end
endmodule
