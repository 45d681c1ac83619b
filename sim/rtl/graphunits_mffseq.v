// The MFF's command sequencer inside the simulated design (sim/mff.py, MFFDesignEnv;
// docs/mff.md, "RTL in the loop"). Simulation only: the rules of the testbench's
// sequencer (sim/mff.py, MFFHarness) in Verilog, so that a batch of commands runs
// without cocotb stepping every cycle:
//   - the thread entries of a batch are presented in order (ents[head .. n));
//   - a command starts only when its warp has no command in flight (PC_wait);
//   - an invalidate starts only when no command is in flight, and nothing starts
//     after it until it completes (a barrier);
//   - a command's entries follow each other (its first entry admits it);
//   - every completion on `done` frees its warp.
// The testbench writes ents[0 .. n), then n, then head = 0, with the unit idle.
module graphunits_mffseq #(
    parameter W = 8,              // the command entry (hw/mff/unit.py MFFCommandLayout): op from bit 0,
    parameter WB = 2,             // then the warp (WB bits); last is the top bit
    parameter INV = 2,            // the invalidate's op code
    parameter DEPTH_LOG2 = 16
) (
    input clk,
    input rst,
    output cmd_valid,
    input cmd_ready,
    output [W-1:0] cmd_payload,
    input done_valid,
    input [WB-1:0] done_warp,
    output idle
);
    localparam D = 1 << DEPTH_LOG2;
    reg [W-1:0] ents [0:D-1] /*verilator public_flat_rw*/;
    reg [31:0] n /*verilator public_flat_rw*/;
    reg [31:0] head /*verilator public_flat_rw*/;
    reg [(1 << WB) - 1:0] busy;
    reg in_cmd;                   // the current command's later entries are being presented
    reg barrier;                  // an invalidate is in flight

    wire [W-1:0] e = ents[head[DEPTH_LOG2-1:0]];
    wire [WB-1:0] w = e[2 +: WB];
    wire inv = e[1:0] == INV;
    assign cmd_payload = e;
    assign cmd_valid = !rst && (head < n) && (in_cmd || (!barrier && (inv ? busy == 0 : !busy[w])));
    assign idle = (head >= n) && busy == 0 && !barrier;

    always @(posedge clk) begin
        if (rst) begin
            n <= 32'd0;
            head <= 32'd0;
            busy <= 0;
            in_cmd <= 1'b0;
            barrier <= 1'b0;
        end else begin
            if (done_valid) begin
                busy[done_warp] <= 1'b0;
                barrier <= 1'b0;
            end
            if (cmd_valid && cmd_ready) begin
                head <= head + 32'd1;
                if (!in_cmd) begin
                    busy[w] <= 1'b1;
                    if (inv) barrier <= 1'b1;
                end
                in_cmd <= !e[W-1];
            end
        end
    end
endmodule
