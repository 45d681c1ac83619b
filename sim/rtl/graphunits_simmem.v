// The testbench memory inside the simulated design (sim/simmem.py; docs/architecture.md,
// "RTL in the loop at simulator speed"). Simulation only: it serves one graphunits memory
// port (hw/mem/port.py) from an array that the testbench loads and reads through the
// simulator's VPI, so that cocotb does not have to step every clock cycle.
//
// Timing, as sim/memory.py's MemoryModel: a request performs its read or write when it
// is accepted; its response may be presented LAT cycles later, LAT drawn uniformly from
// [cfg_lat_lo, cfg_lat_lo + cfg_lat_span - 1]; at most cfg_max_out requests outstanding;
// responses out of order (round robin over the ready ones) unless cfg_in_order; request
// back-pressure and response gaps with probabilities cfg_ready_p / 65536 and
// cfg_gap_p / 65536 (65536: never); error responses for blocks that overlap one of four
// address ranges [lo, hi) or lie outside the array. A presented response stays presented
// until it is taken. The random draws are xorshift32 generators seeded from cfg_seed at
// reset (the Python model's draws differ: the two memories give different cycle counts).
//
// Checks (sticky flags for the testbench): proto_err when a request offered without being
// accepted is withdrawn or changes before it is accepted, or when an accepted address is
// not aligned to the block. Every written block index is logged (wlog) so that the
// testbench reads back only what the design wrote.
//
// Bulk transfers (the testbench sets the flag through the VPI; the memory clears it):
// load_go reads the blocks listed in LOAD_FILE ($readmemh, "@word" lines) at the next
// clock edge, before any request of that edge reads the array; dump_go writes
// "word data" lines (hex) into DUMP_FILE: every block logged in wlog since the last dump
// (or, when wlog overflowed, the blocks [0, dump_top)), and clears the log.
module graphunits_simmem #(
    parameter ADDR_W = 32,
    parameter BLOCK_BYTES = 32,
    parameter BLOCK_LOG2 = 5,
    parameter TAG_W = 7,
    parameter DEPTH_LOG2 = 16,
    parameter SLOTS_LOG2 = 6,
    parameter WLOG_LOG2 = 18,
    parameter LOAD_FILE = "memory.load",
    parameter DUMP_FILE = "memory.dump"
) (
    input clk,
    input rst,
    input req_valid,
    output req_ready,
    input [ADDR_W + 1 + 9 * BLOCK_BYTES + TAG_W - 1:0] req_payload,
    output resp_valid,
    input resp_ready,
    output [TAG_W + 8 * BLOCK_BYTES:0] resp_payload,
    input [ADDR_W-1:0] cfg_base,
    input [15:0] cfg_lat_lo,
    input [15:0] cfg_lat_span,
    input [SLOTS_LOG2:0] cfg_max_out,
    input cfg_in_order,
    input [16:0] cfg_ready_p,
    input [16:0] cfg_gap_p,
    input [4 * ADDR_W - 1:0] cfg_err_lo,
    input [4 * ADDR_W - 1:0] cfg_err_hi,
    input [31:0] cfg_seed,
    output reg [31:0] cnt_reads,
    output reg [31:0] cnt_writes,
    output reg [31:0] cnt_errors,
    output reg [SLOTS_LOG2:0] cnt_max_out,
    output reg [SLOTS_LOG2:0] outstanding,
    output reg [31:0] cycle,
    output reg proto_err,
    output reg [31:0] proto_cycle,
    output reg [31:0] wlog_n /*verilator public_flat_rw*/
);
    localparam BB = BLOCK_BYTES;
    localparam DW = 8 * BB;
    localparam REQ_W = ADDR_W + 1 + 9 * BB + TAG_W;
    localparam K = 1 << SLOTS_LOG2;
    localparam D = 1 << DEPTH_LOG2;
    localparam WL = 1 << WLOG_LOG2;

    // (public: the testbench loads and reads these through the VPI; with Verilator the
    // rest of the design is not public, which keeps it fast)
    reg [DW-1:0] store [0:D-1] /*verilator public_flat_rw*/;
    reg [DEPTH_LOG2-1:0] wlog [0:WL-1] /*verilator public_flat_rw*/;
    reg load_go /*verilator public_flat_rw*/;
    reg dump_go /*verilator public_flat_rw*/;
    reg [31:0] dump_top /*verilator public_flat_rw*/;
    integer n0, fd, di;
    initial begin
        for (n0 = 0; n0 < D; n0 = n0 + 1) store[n0] = {DW{1'b0}};
        load_go = 1'b0;
        dump_go = 1'b0;
        dump_top = 32'd0;
    end

    // request fields (hw/mem/port.py MemRequest: addr, write, wdata, wmask, tag from bit 0)
    wire [ADDR_W-1:0] r_addr = req_payload[ADDR_W-1:0];
    wire r_write = req_payload[ADDR_W];
    wire [DW-1:0] r_wdata = req_payload[ADDR_W + 1 +: DW];
    wire [BB-1:0] r_wmask = req_payload[ADDR_W + 1 + DW +: BB];
    wire [TAG_W-1:0] r_tag = req_payload[ADDR_W + 1 + DW + BB +: TAG_W];

    // random draws
    function [31:0] xs;
        input [31:0] x;
        reg [31:0] y;
        begin
            y = x ^ (x << 13);
            y = y ^ (y >> 17);
            xs = y ^ (y << 5);
        end
    endfunction
    reg [31:0] rng_lat, rng_rdy, rng_gap;
    wire ready_now = ({1'b0, rng_rdy[15:0]} < cfg_ready_p);
    wire gap_now = ({1'b0, rng_gap[15:0]} < cfg_gap_p);

    // response slots
    reg [K-1:0] slot_v;
    reg [31:0] slot_due [0:K-1];
    reg [TAG_W-1:0] slot_tag [0:K-1];
    reg [DW-1:0] slot_data [0:K-1];
    reg slot_err [0:K-1];
    reg [SLOTS_LOG2-1:0] order [0:K-1];          // in-order mode: the slots in acceptance order
    reg [SLOTS_LOG2-1:0] head, tail;
    reg [SLOTS_LOG2-1:0] rr;                      // out of order: the search starts after the last served
    reg [31:0] last_due;
    reg hold;
    reg [SLOTS_LOG2-1:0] hold_idx;
    integer n1;
    initial begin                                 // no X before the first request (Icarus)
        for (n1 = 0; n1 < K; n1 = n1 + 1) begin
            slot_due[n1] = 32'd0;
            slot_tag[n1] = {TAG_W{1'b0}};
            slot_data[n1] = {DW{1'b0}};
            slot_err[n1] = 1'b0;
            order[n1] = {SLOTS_LOG2{1'b0}};
        end
    end

    // the slots whose response may be presented now (vector operations: cheap in Icarus too)
    wire [K-1:0] due_now;
    genvar g;
    generate
        for (g = 0; g < K; g = g + 1) begin : due_bits
            assign due_now[g] = slot_due[g] <= cycle;
        end
    endgenerate
    wire [K-1:0] ready_v = slot_v & due_now;
    // the lowest set bit of a vector, rotated to start at position ``from``
    function [SLOTS_LOG2:0] first_set;              // {found, index}
        input [K-1:0] v;
        input [SLOTS_LOG2-1:0] from;
        reg [2*K-1:0] dbl;
        reg [K-1:0] rot;
        integer q;
        begin
            dbl = {v, v} >> from;
            rot = dbl[K-1:0];
            first_set = {1'b0, {SLOTS_LOG2{1'b0}}};
            for (q = K - 1; q >= 0; q = q - 1)
                if (rot[q]) first_set = {1'b1, q[SLOTS_LOG2-1:0] + from};
        end
    endfunction
    wire [SLOTS_LOG2:0] free_f = first_set(~slot_v, {SLOTS_LOG2{1'b0}});
    wire have_free = free_f[SLOTS_LOG2];
    wire [SLOTS_LOG2-1:0] free_idx = free_f[SLOTS_LOG2-1:0];
    wire [SLOTS_LOG2:0] rr_f = first_set(ready_v, rr);
    wire [SLOTS_LOG2-1:0] oldest = order[head];
    wire have_ready = cfg_in_order ? (slot_v[oldest] && due_now[oldest]) : rr_f[SLOTS_LOG2];
    wire [SLOTS_LOG2-1:0] ready_idx = cfg_in_order ? oldest : rr_f[SLOTS_LOG2-1:0];

    wire [SLOTS_LOG2-1:0] out_idx = hold ? hold_idx : ready_idx;
    assign resp_valid = !rst && (hold || (have_ready && gap_now));
    assign resp_payload = {slot_err[out_idx], slot_data[out_idx], slot_tag[out_idx]};
    assign req_ready = !rst && ready_now && have_free && (outstanding < cfg_max_out);

    // the block a request names, and whether it is answered with an error
    wire [ADDR_W-1:0] off = r_addr - cfg_base;
    wire [ADDR_W-1:0] word_full = off >> BLOCK_LOG2;
    wire [DEPTH_LOG2-1:0] word = word_full[DEPTH_LOG2-1:0];
    wire outside = (r_addr < cfg_base) || (word_full >= D);
    reg in_range;
    integer e;
    always @* begin
        in_range = 1'b0;
        for (e = 0; e < 4; e = e + 1) begin
            if (cfg_err_lo[e * ADDR_W +: ADDR_W] < cfg_err_hi[e * ADDR_W +: ADDR_W] &&
                {1'b0, cfg_err_lo[e * ADDR_W +: ADDR_W]} < {1'b0, r_addr} + BB &&
                r_addr < cfg_err_hi[e * ADDR_W +: ADDR_W])
                in_range = 1'b1;
        end
    end
    wire r_err = outside || in_range;

    // the stream rule on requests
    reg held_v;
    reg [REQ_W-1:0] held_p;

    wire accept = req_valid && req_ready;
    wire taken = resp_valid && resp_ready;
    wire [15:0] lat_draw = (cfg_lat_span <= 16'd1) ? 16'd0 : (rng_lat[15:0] % cfg_lat_span);
    wire [31:0] due_raw = cycle + {16'd0, cfg_lat_lo} + {16'd0, lat_draw};
    wire [31:0] due = (cfg_in_order && last_due > due_raw) ? last_due : due_raw;
    integer b;

    always @(posedge clk) begin
        if (load_go) begin
            $readmemh(LOAD_FILE, store);
            load_go <= 1'b0;
        end
        if (dump_go) begin
            fd = $fopen(DUMP_FILE, "w");
            if (wlog_n <= WL) begin
                for (di = 0; di < wlog_n; di = di + 1)
                    $fwrite(fd, "%h %h\n", wlog[di], store[wlog[di]]);
            end else begin
                for (di = 0; di < dump_top && di < D; di = di + 1)
                    $fwrite(fd, "%h %h\n", di, store[di]);
            end
            $fclose(fd);
            dump_go <= 1'b0;
        end
        if (rst) begin
            slot_v <= {K{1'b0}};
            head <= {SLOTS_LOG2{1'b0}};
            tail <= {SLOTS_LOG2{1'b0}};
            rr <= {SLOTS_LOG2{1'b0}};
            rng_lat <= cfg_seed ^ 32'h9e3779b9 | 32'd1;
            rng_rdy <= cfg_seed ^ 32'h7f4a7c15 | 32'd2;
            rng_gap <= cfg_seed ^ 32'h94d049bb | 32'd4;
            last_due <= 32'd0;
            hold <= 1'b0;
            held_v <= 1'b0;
            cycle <= 32'd0;
            outstanding <= 0;
            cnt_reads <= 32'd0;
            cnt_writes <= 32'd0;
            cnt_errors <= 32'd0;
            cnt_max_out <= 0;
            proto_err <= 1'b0;
            proto_cycle <= 32'd0;
            wlog_n <= 32'd0;
        end else begin
            if (dump_go) wlog_n <= 32'd0;
            cycle <= cycle + 32'd1;
            rng_rdy <= xs(rng_rdy);
            rng_gap <= xs(rng_gap);
            // stream rule: an offered request stays offered, unchanged, until accepted
            if (held_v && (!req_valid || req_payload != held_p) && !proto_err) begin
                proto_err <= 1'b1;
                proto_cycle <= cycle;
            end
            held_v <= req_valid && !req_ready;
            held_p <= req_payload;
            // a response taken frees its slot; one presented and not taken is held
            if (taken) begin
                slot_v[out_idx] <= 1'b0;
                hold <= 1'b0;
                rr <= out_idx + 1'b1;
                if (cfg_in_order) head <= head + 1'b1;
            end else if (resp_valid) begin
                hold <= 1'b1;
                hold_idx <= out_idx;
            end
            if (accept) begin
                rng_lat <= xs(rng_lat);
                if (r_addr[BLOCK_LOG2-1:0] != 0 && !proto_err) begin
                    proto_err <= 1'b1;
                    proto_cycle <= cycle;
                end
                slot_v[free_idx] <= 1'b1;
                slot_due[free_idx] <= due;
                order[tail] <= free_idx;
                tail <= tail + 1'b1;
                slot_tag[free_idx] <= r_tag;
                slot_err[free_idx] <= r_err;
                slot_data[free_idx] <= (r_write || r_err) ? {DW{1'b0}} : store[word];
                last_due <= due;
                if (r_write) begin
                    cnt_writes <= cnt_writes + 32'd1;
                    if (!r_err) begin
                        for (b = 0; b < BB; b = b + 1)
                            if (r_wmask[b]) store[word][8 * b +: 8] <= r_wdata[8 * b +: 8];
                        if (wlog_n < WL) wlog[wlog_n[WLOG_LOG2-1:0]] <= word;
                        wlog_n <= wlog_n + 32'd1;
                    end
                end else begin
                    cnt_reads <= cnt_reads + 32'd1;
                end
                if (r_err) cnt_errors <= cnt_errors + 32'd1;
            end
            outstanding <= outstanding + (accept ? 1 : 0) - (taken ? 1 : 0);
            if (outstanding + (accept ? 1 : 0) > cnt_max_out) cnt_max_out <= outstanding + (accept ? 1 : 0);
        end
    end
endmodule
