// The IRU's warps inside the simulated design (sim/iru.py, IRUDesignEnv; docs/iru.md,
// "RTL in the loop"). Simulation only: the testbench's warp-request generator
// (sim/iru.py, IRUHarness) in Verilog, so that an operation runs without cocotb
// stepping every cycle. golden.iru.RequestPolicy's rules:
//   - warp w (cfg_full threads, the last one cfg_last) asks partition w % P;
//   - the first cfg_first warps ask cfg_start + w * cfg_gap cycles after the command
//     is accepted;
//   - each later warp asks cfg_think + 1 cycles after an earlier warp's reply ended
//     (warps numbered in the order the replies end, partition 0 first in a cycle);
//   - a partition's requests wait in (due cycle, warp) order behind its stream;
//   - once every warp has asked, nothing goes out until the next command.
// The testbench writes the cfg_* registers, then hands the IRU its command.
module graphunits_iruwarps #(
    parameter P = 2,
    parameter WB = 8,             // warp field (IRURequest.warp)
    parameter TB = 6,             // threads field (IRURequest.threads)
    parameter FIFO_LOG2 = 12      // later warps waiting per partition
) (
    input clk,
    input rst,
    input [31:0] cycle,
    input cmd_fire,
    input [P-1:0] reply_done,
    output reg [P-1:0] req_valid,
    input [P-1:0] req_ready,
    output reg [P*WB-1:0] req_warp,
    output reg [P*TB-1:0] req_threads,
    output reg overflow /*verilator public_flat_rw*/
);
    localparam F = 1 << FIFO_LOG2;
    reg [31:0] cfg_nwarps /*verilator public_flat_rw*/;
    reg [31:0] cfg_first /*verilator public_flat_rw*/;
    reg [31:0] cfg_start /*verilator public_flat_rw*/;
    reg [31:0] cfg_gap /*verilator public_flat_rw*/;
    reg [31:0] cfg_think /*verilator public_flat_rw*/;
    reg [TB-1:0] cfg_full /*verilator public_flat_rw*/;
    reg [TB-1:0] cfg_last /*verilator public_flat_rw*/;

    reg armed;
    reg [31:0] c0;
    reg [31:0] issued;
    reg [31:0] init_w [0:P-1];
    reg [31:0] fw [0:P*F-1];
    reg [31:0] fd [0:P*F-1];
    reg [FIFO_LOG2:0] fh [0:P-1];
    reg [FIFO_LOG2:0] ft [0:P-1];

    // what each partition offers now: its next initial warp or its oldest later one
    reg [P-1:0] pick_init;
    reg [31:0] pw [0:P-1];
    integer p;
    reg ia, fa;
    reg [31:0] idue, fdue, fwv, due;
    always @* begin
        for (p = 0; p < P; p = p + 1) begin
            ia = armed && init_w[p] < cfg_first;
            idue = c0 + cfg_start + init_w[p] * cfg_gap;
            fa = fh[p] != ft[p];
            fdue = fd[p * F + fh[p][FIFO_LOG2-1:0]];
            fwv = fw[p * F + fh[p][FIFO_LOG2-1:0]];
            pick_init[p] = ia && (!fa || idue < fdue || (idue == fdue && init_w[p] < fwv));
            pw[p] = pick_init[p] ? init_w[p] : fwv;
            due = pick_init[p] ? idue : fdue;
            req_valid[p] = !rst && (ia || fa) && due <= cycle;
            req_warp[p * WB +: WB] = pw[p][WB-1:0];
            req_threads[p * TB +: TB] = (pw[p] + 32'd1 == cfg_nwarps) ? cfg_last : cfg_full;
        end
    end

    integer q;
    reg [31:0] nxt, w;
    reg [31:0] tgt;
    reg [FIFO_LOG2:0] tl [0:P-1];
    reg alldone;
    always @(posedge clk) begin
        if (rst) begin
            armed <= 1'b0;
            overflow <= 1'b0;
            issued <= 32'd0;
            for (q = 0; q < P; q = q + 1) begin
                init_w[q] <= q;
                fh[q] <= 0;
                ft[q] <= 0;
            end
        end else if (cmd_fire) begin
            armed <= 1'b1;
            c0 <= cycle;
            issued <= cfg_first;
            for (q = 0; q < P; q = q + 1) begin
                init_w[q] <= q;
                fh[q] <= 0;
                ft[q] <= 0;
            end
        end else begin
            for (q = 0; q < P; q = q + 1) begin
                if (req_valid[q] && req_ready[q]) begin
                    if (pick_init[q]) init_w[q] <= init_w[q] + P;
                    else fh[q] <= fh[q] + 1'b1;
                end
                tl[q] = ft[q];
            end
            nxt = issued;
            for (q = 0; q < P; q = q + 1) begin
                if (reply_done[q] && nxt < cfg_nwarps) begin
                    w = nxt;
                    tgt = w % P;
                    if (tl[tgt] - fh[tgt] >= F) overflow <= 1'b1;
                    fw[tgt * F + tl[tgt][FIFO_LOG2-1:0]] <= w;
                    fd[tgt * F + tl[tgt][FIFO_LOG2-1:0]] <= cycle + 32'd1 + cfg_think;
                    tl[tgt] = tl[tgt] + 1'b1;
                    nxt = nxt + 32'd1;
                end
            end
            issued <= nxt;
            for (q = 0; q < P; q = q + 1) ft[q] <= tl[q];
            // every warp asked: disarmed until the next command (the testbench may
            // then rewrite cfg_* without a stale request going out)
            alldone = (nxt >= cfg_nwarps);
            for (q = 0; q < P; q = q + 1)
                if (init_w[q] < cfg_first || fh[q] != ft[q] || (req_valid[q] && req_ready[q])) alldone = 1'b0;
            if (alldone) armed <= 1'b0;
        end
    end
endmodule
