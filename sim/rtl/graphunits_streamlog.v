// A stream recorder inside the simulated design (sim/simmem.py, "environments";
// docs/architecture.md, "RTL in the loop at simulator speed"). Simulation only: it takes
// every beat offered on one output stream of a unit (ready stays high while the log has
// room) and logs {cycle, payload}, so that the testbench reads a whole operation's
// output through the VPI once instead of stepping every clock cycle.
//
// The testbench sets dump (through the VPI) between operations: at the next clock edge
// the recorder writes log[0 .. n) into FILE, one hex line {payload, cycle} each, and
// starts again at 0 (a beat taken at that edge is the new log's first). Ready stays
// high: a beat that finds the log full is lost and sets the sticky flag full (the
// testbench reports it), so that a too small log never hangs the unit.
module graphunits_streamlog #(
    parameter W = 8,
    parameter DEPTH_LOG2 = 16,
    parameter FILE = "streamlog.log"
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
    reg dump /*verilator public_flat_rw*/;
    integer fd, i;
    initial dump = 1'b0;
    wire [31:0] at = dump ? 32'd0 : n;

    assign ready = !rst;
    always @(posedge clk) begin
        if (dump) begin
            fd = $fopen(FILE, "w");
            for (i = 0; i < n; i = i + 1)
                $fwrite(fd, "%h\n", log[i]);
            $fclose(fd);
            dump <= 1'b0;
        end
        if (rst) begin
            n <= 32'd0;
            full <= 1'b0;
        end else begin
            if (valid && at < D) begin
                log[at[DEPTH_LOG2-1:0]] <= {payload, cycle};
                n <= at + 32'd1;
            end else if (dump) begin
                n <= 32'd0;
            end
            if (valid && at >= D) full <= 1'b1;
        end
    end
endmodule
