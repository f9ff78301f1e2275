/* linegrind: a Valgrind tool that records the instruction and memory-access
   stream of a program for linegrind's trace-driven cache simulator.

   It observes and writes; it analyses nothing. Each superblock is described
   once, when it is instrumented (its instructions and, per instruction, its
   data accesses and side exits, in program order); each run of it writes
   its id and the stack pointer, then the address of every data access as it
   happens, and an exit record when a side exit is taken. Thread switches
   and exits, signal delivery and return, mapped objects, section markers,
   instrumentation toggles and execve calls are written as they happen, and
   so are heap blocks, observed at the entries and returns of malloc,
   calloc, realloc, the aligned allocations (memalign, aligned_alloc,
   posix_memalign, valloc, pvalloc), free and C++'s operator new and
   delete. Records go into a
   large buffer written out with VG_(write) when full (format: README.md).

   Copyright (C) 2026 the linegrind authors.

   This program is free software; you can redistribute it and/or modify it
   under the terms of the GNU General Public License as published by the
   Free Software Foundation; either version 2 of the License, or (at your
   option) any later version. */

#include "pub_tool_basics.h"
#include "pub_tool_aspacemgr.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_libcsetjmp.h"
#include "pub_tool_libcsignal.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_signals.h"
#include "pub_tool_debuginfo.h"
#include "pub_tool_threadstate.h"
#include "pub_tool_vki.h"
#include "pub_tool_vkiscnums.h"
#include "libvex_guest_offsets.h"
#include "valgrind.h"
#include "callgrind.h"
#include "linegrind.h"

/* Moves a file descriptor out of the client's range, so that a program
   closing or reusing descriptors cannot touch the trace. Core API, exported
   by libcoregrind but not declared in the tool headers. */
extern Int VG_(safe_fd)(Int oldfd);

/* ------------------------------------------------------------------ */
/* Output                                                              */
/* ------------------------------------------------------------------ */

#define BUFFER_SIZE (4 << 20)
/* Room kept free so that any single record fits without a check. */
#define RECORD_MAX 1024
/* Bytes of an object's path written at most: the longest path Linux opens
   (PATH_MAX less its terminating NUL), so that none is cut. */
#define MAX_PATH 4095

static const HChar* clo_out = NULL;
static Bool clo_instr_atstart = True;

static Int out_fd = -1;
static UChar* buffer;
static UInt used;
static Bool recording;

/* Valgrind's core gives its own modules these, not its tools' headers. */
extern Int VG_(sigemptyset)(vki_sigset_t* set);
extern Int VG_(sigaddset)(vki_sigset_t* set, Int signum);
extern Int VG_(sigtimedwait_zero)(const vki_sigset_t* set, vki_siginfo_t* info);

/* Takes back the SIGPIPE a write to a pipe whose reader is gone raised:
   Valgrind keeps it pending while the tool runs, and would hand it to the
   program, which wrote to no such pipe, at its next system call (killing
   it, or calling its handler). */
static void take_back_sigpipe(void)
{
   vki_sigset_t pipe;
   vki_siginfo_t info;
   VG_(sigemptyset)(&pipe);
   VG_(sigaddset)(&pipe, VKI_SIGPIPE);
   VG_(sigtimedwait_zero)(&pipe, &info);
}

static void flush(void)
{
   UInt done = 0;
   while (out_fd >= 0 && done < used) {
      Int n = VG_(write)(out_fd, buffer + done, used - done);
      if (n <= 0) {
         /* The reader gone (linegrind record ended, by a signal say) is
            told apart from a write that failed. */
         if (n == -VKI_EPIPE) {
            take_back_sigpipe();
            VG_(umsg)("linegrind: linegrind record, which reads the trace, "
                      "has ended; recording stops\n");
         } else
            VG_(umsg)("linegrind: cannot write the trace; recording stops\n");
         VG_(close)(out_fd);
         out_fd = -1;
         break;
      }
      done += n;
   }
   used = 0;
}

static inline void room(UInt bytes)
{
   if (used + bytes > BUFFER_SIZE)
      flush();
}

static inline void put_u8(UInt v)  { buffer[used++] = (UChar)v; }

static inline void put_u16(UInt v)
{
   buffer[used++] = (UChar)v;
   buffer[used++] = (UChar)(v >> 8);
}

static inline void put_u32(UInt v)
{
   put_u16(v & 0xffff);
   put_u16(v >> 16);
}

static inline void put_u64(ULong v)
{
   put_u32((UInt)v);
   put_u32((UInt)(v >> 32));
}

static void put_string(const HChar* s, UInt max)
{
   UInt len = VG_(strlen)(s);
   if (len > max)
      len = max;
   put_u16(len);
   VG_(memcpy)(buffer + used, s, len);
   used += len;
}

static VG_MINIMAL_JMP_BUF(unreadable);

/* Valgrind calls this, instead of stopping, on a fault of the tool's own
   code while it is set: a read of the program's memory that the mapping
   allows but nothing backs (a file's pages past its end: SIGBUS). */
static void on_unreadable(Int sig, Addr addr)
{
   VG_MINIMAL_LONGJMP(unreadable);
}

/* The program's NUL-terminated string at `s`, at most `max` bytes, as
   far as its memory can be read: natively a client request does nothing,
   so a bad pointer given to one cuts the name there (empty, left out with
   a warning) rather than crash Valgrind. */
static void put_client_string(Addr s, UInt max)
{
   UChar* name = buffer + used + 2;
   /* Kept in memory: read again after a fault's jump. */
   volatile UInt len = 0;
   /* The jump leaves Valgrind's signal handler without returning from it,
      so the signals it blocked stay blocked unless set back: the next
      fault would then kill Valgrind. */
   vki_sigset_t mask;
   VG_(sigprocmask)(VKI_SIG_SETMASK, NULL, &mask);
   fault_catcher_t before = VG_(set_fault_catcher)(on_unreadable);
   if (VG_MINIMAL_SETJMP(unreadable) == 0) {
      while (len < max && s != 0
             && VG_(am_is_valid_for_client)(s + len, 1, VKI_PROT_READ)) {
         UChar c = *(const volatile UChar*)(s + len);
         if (c == 0)
            break;
         name[len] = c;
         len++;
      }
   } else {
      VG_(sigprocmask)(VKI_SIG_SETMASK, &mask, NULL);
   }
   VG_(set_fault_catcher)(before);
   put_u16(len);
   used += len;
}

/* ------------------------------------------------------------------ */
/* Heap events, observed at the allocation functions' entries and      */
/* returns: the allocator itself runs as it would without the tool     */
/* ------------------------------------------------------------------ */

#define ALLOC_NONE    0
#define ALLOC_MALLOC  1   /* size in the first argument */
#define ALLOC_CALLOC  2   /* count and size */
#define ALLOC_REALLOC 3   /* old block and new size */
#define ALLOC_FREE    4   /* block in the first argument */
#define ALLOC_ALIGNED 5   /* alignment and size */
#define ALLOC_POSIX_MEMALIGN 6   /* where the block goes, alignment, size */

#define MAX_THREADS 1024
#define MAX_PENDING 16

typedef struct {
   /* `old`: realloc's block, or where posix_memalign puts the new one. */
   UWord kind, size, old, ret_addr, sp;
} PendingAlloc;

static PendingAlloc pending[MAX_THREADS][MAX_PENDING];
static UInt n_pending[MAX_THREADS];
static ThreadId last_tid = VG_INVALID_THREADID;

static UWord alloc_kind(const HChar* name)
{
   /* Placement new and delete, `operator new(unsigned long, void*)`,
      allocate and free nothing. */
   if (VG_(strstr)(name, ", void*)") != NULL)
      return ALLOC_NONE;
   if (VG_(strcmp)(name, "malloc") == 0
       || VG_(strcmp)(name, "valloc") == 0
       || VG_(strcmp)(name, "pvalloc") == 0
       || VG_(strncmp)(name, "operator new(", 13) == 0
       || VG_(strncmp)(name, "operator new[](", 15) == 0)
      return ALLOC_MALLOC;
   if (VG_(strcmp)(name, "calloc") == 0)
      return ALLOC_CALLOC;
   if (VG_(strcmp)(name, "realloc") == 0)
      return ALLOC_REALLOC;
   if (VG_(strcmp)(name, "memalign") == 0 || VG_(strcmp)(name, "aligned_alloc") == 0)
      return ALLOC_ALIGNED;
   if (VG_(strcmp)(name, "posix_memalign") == 0)
      return ALLOC_POSIX_MEMALIGN;
   if (VG_(strcmp)(name, "free") == 0
       || VG_(strncmp)(name, "operator delete(", 16) == 0
       || VG_(strncmp)(name, "operator delete[](", 18) == 0)
      return ALLOC_FREE;
   return ALLOC_NONE;
}

static void put_free(UWord block)
{
   if (block == 0 || !recording)
      return;
   room(RECORD_MAX);
   put_u8('F');
   put_u64(block);
}

/* At an allocation function's entry: a free is written at once; an
   allocation waits for its return, to learn the block's address. Calls
   made inside an allocation function that is still running (operator new
   calling malloc, new[] jumping to new with the same stack pointer,
   delete calling free) are its implementation and are not written
   again. */
static void lg_alloc_entry(UWord kind, UWord arg0, UWord arg1, UWord arg2, UWord sp)
{
   ThreadId tid = VG_(get_running_tid)();
   if (tid >= MAX_THREADS)
      return;
   if (n_pending[tid] > 0 && sp <= pending[tid][n_pending[tid] - 1].sp)
      return;
   if (kind == ALLOC_FREE)
      put_free(arg0);
   if (n_pending[tid] == MAX_PENDING) {
      /* Deeper than any real program nests allocations: forget the
         oldest. */
      VG_(memmove)(&pending[tid][0], &pending[tid][1],
                   (MAX_PENDING - 1) * sizeof(PendingAlloc));
      n_pending[tid]--;
   }
   PendingAlloc* p = &pending[tid][n_pending[tid]++];
   p->kind = kind;
   switch (kind) {
   case ALLOC_CALLOC:  p->size = arg0 * arg1; break;
   case ALLOC_REALLOC:
   case ALLOC_ALIGNED: p->size = arg1; break;
   case ALLOC_POSIX_MEMALIGN: p->size = arg2; break;
   default:            p->size = arg0; break;
   }
   p->old = kind == ALLOC_REALLOC || kind == ALLOC_POSIX_MEMALIGN ? arg0 : 0;
   p->ret_addr = *(UWord*)sp;
   p->sp = sp;
}

/* A block starting at `addr` with stack pointer `sp` in the running
   thread. A pending allocation entered with a lower stack pointer has
   ended: by returning, if this is its return address, or else by a longjmp
   or an exception leaving it, which allocates nothing. */
static inline void check_alloc_return(Addr addr, UWord sp)
{
   ThreadId tid = last_tid;
   if (tid >= MAX_THREADS)
      return;
   while (n_pending[tid] > 0 && sp > pending[tid][n_pending[tid] - 1].sp) {
      PendingAlloc* p = &pending[tid][--n_pending[tid]];
      if (addr != p->ret_addr || p->kind == ALLOC_FREE)
         continue;
      UWord block = 0;
      VG_(get_shadow_regs_area)(tid, (UChar*)&block, 0, OFFSET_amd64_RAX, sizeof block);
      /* posix_memalign returns 0 and has put the block where it was told
         (read only where the program could read it: a return matched to a
         call that a longjmp left may find anything there). */
      if (p->kind == ALLOC_POSIX_MEMALIGN)
         block = (UInt)block == 0
                 && VG_(am_is_valid_for_client)(p->old, sizeof(UWord), VKI_PROT_READ)
                    ? *(const UWord*)p->old : 0;
      /* realloc to no size frees the block and returns none; one that
         fails returns none and keeps it. */
      if (p->kind == ALLOC_REALLOC && (block != 0 || p->size == 0))
         put_free(p->old);
      if (block == 0 || !recording)
         return;
      room(RECORD_MAX);
      put_u8('H');
      put_u64(block);
      put_u64(p->size);
      return;
   }
}

/* ------------------------------------------------------------------ */
/* Runtime helpers, called from instrumented code                      */
/* ------------------------------------------------------------------ */

/* Whether the last block run went through to its end: set by a store at
   the end of every block, cleared as the next run starts. A signal that
   comes while it is set came between two runs, not in the middle of one,
   though the thread may stop at the start of the same block again. */
static UChar run_ended;

static VG_REGPARM(3) void lg_block(UWord id, UWord sp, UWord addr)
{
   run_ended = 0;
   check_alloc_return(addr, sp);
   if (!recording)
      return;
   room(RECORD_MAX);
   put_u8('B');
   put_u32((UInt)id);
   put_u64(sp);
}

static VG_REGPARM(1) void lg_access(UWord addr)
{
   if (!recording)
      return;
   room(RECORD_MAX);
   put_u8('A');
   put_u64(addr);
}

static VG_REGPARM(2) void lg_guarded(UWord index, UWord addr)
{
   if (!recording)
      return;
   room(RECORD_MAX);
   put_u8('G');
   put_u16((UInt)index);
   put_u64(addr);
}

static VG_REGPARM(1) void lg_exit(UWord index)
{
   if (!recording)
      return;
   room(RECORD_MAX);
   put_u8('X');
   put_u16((UInt)index);
}

/* ------------------------------------------------------------------ */
/* Objects: reported once, when code of theirs is first instrumented    */
/* ------------------------------------------------------------------ */

#define MAX_OBJECTS 4096
/* Objects reported, by text address and path: a DebugInfo's address is no
   name for it, as one unloaded (dlclose) frees it for the next. */
static Addr reported_text[MAX_OBJECTS];
static HChar* reported_path[MAX_OBJECTS];
static UInt n_reported;

static void report_object(Addr addr)
{
   const DebugInfo* di = VG_(find_DebugInfo)(VG_(current_DiEpoch)(), addr);
   if (di == NULL)
      return;
   Addr text = VG_(DebugInfo_get_text_avma)(di);
   const HChar* name = VG_(DebugInfo_get_filename)(di);
   const HChar* path = name ? name : "";
   for (UInt i = 0; i < n_reported; i++)
      if (reported_text[i] == text && VG_(strcmp)(reported_path[i], path) == 0)
         return;
   if (n_reported < MAX_OBJECTS) {
      reported_text[n_reported] = text;
      reported_path[n_reported] = VG_(strdup)("lg.object", path);
      n_reported++;
   }
   room(RECORD_MAX + MAX_PATH);
   put_u8('O');
   put_u64((ULong)VG_(DebugInfo_get_text_bias)(di));
   put_u64(text);
   put_u64(VG_(DebugInfo_get_text_size)(di));
   put_string(path, MAX_PATH);
}

/* ------------------------------------------------------------------ */
/* Instrumentation                                                     */
/* ------------------------------------------------------------------ */

/* Item kinds in a block description, per instruction, in program order. */
#define ITEM_READ    1
#define ITEM_WRITE   2
#define ITEM_MODIFY  3
#define ITEM_GUARDED 4   /* flag on an access: it may not happen */
#define ITEM_EXIT    8   /* a side exit; low bits: its jump kind */

#define KIND_BORING 0
#define KIND_CALL   1
#define KIND_RET    2
#define KIND_OTHER  3

#define MAX_INSTRS 1024
#define HELPER_ACCESS_LIMIT 64
#define MAX_ITEMS  4096

typedef struct {
   UShort offset;   /* from the first instruction */
   UChar  len;
   UShort first_item;
   UShort n_items;
} Instr;

typedef struct {
   UChar   kind;
   UShort  size;
   IRExpr* addr;      /* for merging a write into the read before it */
   Int     stmt;      /* position of its dirty call in the output */
} Item;

static Instr instrs[MAX_INSTRS];
static Item items[MAX_ITEMS];
static UInt n_instrs, n_items, n_exits, n_guarded;
static UInt next_block_id;

static UChar jump_kind(IRJumpKind jk)
{
   switch (jk) {
   case Ijk_Boring: return KIND_BORING;
   case Ijk_Call:   return KIND_CALL;
   case Ijk_Ret:    return KIND_RET;
   default:         return KIND_OTHER;
   }
}

static void call_helper(IRSB* sb, const HChar* name, void* fn, Int regparms,
                        IRExpr** args, IRExpr* guard)
{
   IRDirty* di = unsafeIRDirty_0_N(regparms, name, VG_(fnptr_to_fnentry)(fn), args);
   if (guard)
      di->guard = guard;
   addStmtToIRSB(sb, IRStmt_Dirty(di));
}

/* Records one data access of the current instruction. A write of the same
   size to the same address right after a read in one instruction becomes
   one modify, as Callgrind merges them. */
static void add_access(IRSB* sb, UChar kind, Int size, IRExpr* addr, IRExpr* guard)
{
   tl_assert(n_instrs > 0);
   Instr* in = &instrs[n_instrs - 1];
   if (kind == ITEM_WRITE && guard == NULL && in->n_items > 0) {
      Item* last = &items[n_items - 1];
      if (last->kind == ITEM_READ && last->size == size && eqIRAtom(last->addr, addr)) {
         last->kind = ITEM_MODIFY;
         return;
      }
   }
   if (n_items >= MAX_ITEMS)
      VG_(tool_panic)("linegrind: too many accesses in one superblock");
   Item* it = &items[n_items++];
   it->kind = kind | (guard ? ITEM_GUARDED : 0);
   it->size = size;
   it->addr = addr;
   in->n_items++;
   if (guard) {
      IRExpr** args = mkIRExprVec_2(mkIRExpr_HWord(n_items - 1), addr);
      call_helper(sb, "lg_guarded", lg_guarded, 2, args, guard);
      n_guarded++;
   } else {
      call_helper(sb, "lg_access", lg_access, 1, mkIRExprVec_1(addr), NULL);
   }
}

static void add_exit(IRSB* sb, IRJumpKind jk, IRExpr* guard)
{
   if (n_instrs == 0)
      return;   /* an exit before the first instruction runs none of it */
   if (n_items >= MAX_ITEMS)
      VG_(tool_panic)("linegrind: too many items in one superblock");
   Item* it = &items[n_items++];
   it->kind = ITEM_EXIT | jump_kind(jk);
   it->size = 0;
   it->addr = NULL;
   instrs[n_instrs - 1].n_items++;
   IRExpr** args = mkIRExprVec_1(mkIRExpr_HWord(n_exits));
   call_helper(sb, "lg_exit", lg_exit, 1, args, guard);
   n_exits++;
}

static void describe_block(UInt id, Addr start, UChar end_kind)
{
   /* Per instruction its offset, length and item count; per item its kind
      and size. */
   room(RECORD_MAX + 5 * MAX_INSTRS + 3 * MAX_ITEMS);
   put_u8('D');
   put_u32(id);
   put_u64(start);
   put_u16(n_instrs);
   put_u8(end_kind);
   for (UInt i = 0; i < n_instrs; i++) {
      put_u16(instrs[i].offset);
      put_u8(instrs[i].len);
      put_u16(instrs[i].n_items);
      for (UInt k = 0; k < instrs[i].n_items; k++) {
         Item* it = &items[instrs[i].first_item + k];
         put_u8(it->kind);
         put_u16(it->size);
      }
   }
}

static IRSB* lg_instrument(VgCallbackClosure* closure, IRSB* sb_in,
                           const VexGuestLayout* layout,
                           const VexGuestExtents* vge,
                           const VexArchInfo* archinfo_host,
                           IRType word_ty, IRType host_word_ty)
{
   if (word_ty != host_word_ty)
      VG_(tool_panic)("linegrind: host and guest word sizes differ");

   IRSB* sb = deepCopyIRSBExceptStmts(sb_in);
   Int i = 0;
   /* Statements before the first instruction mark (none in practice). */
   for (; i < sb_in->stmts_used && sb_in->stmts[i]->tag != Ist_IMark; i++)
      addStmtToIRSB(sb, sb_in->stmts[i]);
   if (i == sb_in->stmts_used)
      return sb;

   Addr start = (Addr)sb_in->stmts[i]->Ist.IMark.addr;
   UInt id = next_block_id++;
   n_instrs = n_items = n_exits = n_guarded = 0;

   /* The block's run: its id and the stack pointer on entry. */
   IRTemp sp = newIRTemp(sb->tyenv, word_ty);
   addStmtToIRSB(sb, IRStmt_WrTmp(sp, IRExpr_Get(layout->offset_SP, word_ty)));
   call_helper(sb, "lg_block", lg_block, 3,
               mkIRExprVec_3(mkIRExpr_HWord(id), IRExpr_RdTmp(sp), mkIRExpr_HWord(start)),
               NULL);
   report_object(start);
   const HChar* name;
   if (VG_(get_fnname_if_entry)(VG_(current_DiEpoch)(), start, &name)) {
      UWord kind = alloc_kind(name);
      if (kind != ALLOC_NONE) {
         IRTemp arg0 = newIRTemp(sb->tyenv, word_ty);
         IRTemp arg1 = newIRTemp(sb->tyenv, word_ty);
         IRTemp arg2 = newIRTemp(sb->tyenv, word_ty);
         addStmtToIRSB(sb, IRStmt_WrTmp(arg0, IRExpr_Get(OFFSET_amd64_RDI, word_ty)));
         addStmtToIRSB(sb, IRStmt_WrTmp(arg1, IRExpr_Get(OFFSET_amd64_RSI, word_ty)));
         addStmtToIRSB(sb, IRStmt_WrTmp(arg2, IRExpr_Get(OFFSET_amd64_RDX, word_ty)));
         call_helper(sb, "lg_alloc_entry", lg_alloc_entry, 0,
                     mkIRExprVec_5(mkIRExpr_HWord(kind), IRExpr_RdTmp(arg0),
                                   IRExpr_RdTmp(arg1), IRExpr_RdTmp(arg2),
                                   IRExpr_RdTmp(sp)),
                     NULL);
      }
   }

   for (; i < sb_in->stmts_used; i++) {
      IRStmt* st = sb_in->stmts[i];
      switch (st->tag) {
      case Ist_IMark: {
         if (n_instrs >= MAX_INSTRS)
            VG_(tool_panic)("linegrind: too many instructions in one superblock");
         Addr addr = (Addr)st->Ist.IMark.addr;
         Instr* in = &instrs[n_instrs++];
         in->offset = (UShort)(addr - start);
         /* An instruction VEX cannot decode (it raises SIGILL) has no
            length: Callgrind and Cachegrind count it as the shortest. */
         in->len = st->Ist.IMark.len == 0 ? VG_MIN_INSTR_SZB
                                          : (UChar)st->Ist.IMark.len;
         in->first_item = n_items;
         in->n_items = 0;
         addStmtToIRSB(sb, st);
         break;
      }
      case Ist_WrTmp: {
         IRExpr* data = st->Ist.WrTmp.data;
         if (data->tag == Iex_Load)
            add_access(sb, ITEM_READ, sizeofIRType(data->Iex.Load.ty),
                       data->Iex.Load.addr, NULL);
         addStmtToIRSB(sb, st);
         break;
      }
      case Ist_Store: {
         IRType ty = typeOfIRExpr(sb_in->tyenv, st->Ist.Store.data);
         add_access(sb, ITEM_WRITE, sizeofIRType(ty), st->Ist.Store.addr, NULL);
         addStmtToIRSB(sb, st);
         break;
      }
      case Ist_LoadG: {
         IRLoadG* lg = st->Ist.LoadG.details;
         IRType ty = Ity_INVALID, wide = Ity_INVALID;
         typeOfIRLoadGOp(lg->cvt, &wide, &ty);
         add_access(sb, ITEM_READ, sizeofIRType(ty), lg->addr, lg->guard);
         addStmtToIRSB(sb, st);
         break;
      }
      case Ist_StoreG: {
         IRStoreG* sg = st->Ist.StoreG.details;
         IRType ty = typeOfIRExpr(sb_in->tyenv, sg->data);
         add_access(sb, ITEM_WRITE, sizeofIRType(ty), sg->addr, sg->guard);
         addStmtToIRSB(sb, st);
         break;
      }
      case Ist_CAS: {
         IRCAS* cas = st->Ist.CAS.details;
         Int size = sizeofIRType(typeOfIRExpr(sb_in->tyenv, cas->dataLo));
         if (cas->dataHi != NULL)
            size *= 2;
         add_access(sb, ITEM_READ, size, cas->addr, NULL);
         add_access(sb, ITEM_WRITE, size, cas->addr, NULL);
         addStmtToIRSB(sb, st);
         break;
      }
      case Ist_LLSC: {
         if (st->Ist.LLSC.storedata == NULL) {
            IRType ty = typeOfIRTemp(sb_in->tyenv, st->Ist.LLSC.result);
            add_access(sb, ITEM_READ, sizeofIRType(ty), st->Ist.LLSC.addr, NULL);
         } else {
            IRType ty = typeOfIRExpr(sb_in->tyenv, st->Ist.LLSC.storedata);
            add_access(sb, ITEM_WRITE, sizeofIRType(ty), st->Ist.LLSC.addr, NULL);
         }
         addStmtToIRSB(sb, st);
         break;
      }
      case Ist_Dirty: {
         IRDirty* d = st->Ist.Dirty.details;
         if (d->mFx != Ifx_None) {
            /* Helpers that save or load the FPU or vector state (pieces
               of up to 512 bytes and more) are clamped to 64 bytes, as
               Callgrind clamps them with 64-byte lines (to the smallest of
               its line sizes), so that both simulate the same accesses.
               Their guard (XSAVE's and XRSTOR's pieces are each guarded
               by the mask of state components) is not looked at: Callgrind
               and Cachegrind count every piece, saved or not. */
            Int size = d->mSize > HELPER_ACCESS_LIMIT ? HELPER_ACCESS_LIMIT : d->mSize;
            if (d->mFx == Ifx_Read || d->mFx == Ifx_Modify)
               add_access(sb, ITEM_READ, size, d->mAddr, NULL);
            if (d->mFx == Ifx_Write || d->mFx == Ifx_Modify)
               add_access(sb, ITEM_WRITE, size, d->mAddr, NULL);
         }
         addStmtToIRSB(sb, st);
         break;
      }
      case Ist_Exit:
         add_exit(sb, st->Ist.Exit.jk, st->Ist.Exit.guard);
         addStmtToIRSB(sb, st);
         break;
      default:
         addStmtToIRSB(sb, st);
         break;
      }
   }
   /* A plain store, not a call: it runs at the end of every run. */
   addStmtToIRSB(sb, IRStmt_Store(Iend_LE, mkIRExpr_HWord((HWord)&run_ended),
                                  IRExpr_Const(IRConst_U8(1))));
   describe_block(id, start, jump_kind(sb_in->jumpkind));
   return sb;
}

/* ------------------------------------------------------------------ */
/* Threads, signals, client requests, fork                              */
/* ------------------------------------------------------------------ */

static void lg_start_client_code(ThreadId tid, ULong blocks_done)
{
   if (tid == last_tid)
      return;
   last_tid = tid;
   room(RECORD_MAX);
   put_u8('T');
   put_u32(tid);
}

/* Valgrind gives an ended thread's id to the next thread it creates: the
   record lets that thread start with a stack of its own. */
static void lg_pre_thread_ll_exit(ThreadId tid)
{
   if (tid < MAX_THREADS)
      n_pending[tid] = 0;
   room(RECORD_MAX);
   put_u8('Q');
   put_u32(tid);
}

/* The signal's record gives the address the thread resumes at when the
   handler returns (for a fault, where the instruction pointer was last
   set: the start of the faulting block, or an instruction of it that
   needed it exact) and whether the last run had ended. */
static void lg_pre_deliver_signal(ThreadId tid, Int sig, Bool alt_stack)
{
   lg_start_client_code(tid, 0);
   room(RECORD_MAX);
   put_u8('S');
   put_u32(sig);
   put_u64(VG_(get_IP)(tid));
   put_u8(run_ended);
}

static void lg_post_deliver_signal(ThreadId tid, Int sig)
{
   lg_start_client_code(tid, 0);
   room(RECORD_MAX);
   put_u8('R');
   put_u32(sig);
}

static void set_recording(Bool on)
{
   if (recording == on)
      return;
   recording = on;
   room(RECORD_MAX);
   put_u8('I');
   put_u8(on);
}

static Bool lg_client_request(ThreadId tid, UWord* args, UWord* ret)
{
   switch (args[0]) {
   case VG_USERREQ__LINEGRIND_BEGIN:
   case VG_USERREQ__LINEGRIND_END: {
      lg_start_client_code(tid, 0);
      room(RECORD_MAX + 256);
      put_u8('M');
      put_u8(args[0] == VG_USERREQ__LINEGRIND_END);
      put_client_string(args[1], 200);
      *ret = 0;
      return True;
   }
   case VG_USERREQ__START_INSTRUMENTATION:
      set_recording(True);
      *ret = 0;
      return True;
   case VG_USERREQ__STOP_INSTRUMENTATION:
      set_recording(False);
      *ret = 0;
      return True;
   default:
      return False;
   }
}

/* A forked child must not write into its parent's trace: it is not
   recorded, and what the parent had buffered is the parent's to write. */
static void lg_atfork_child(ThreadId tid)
{
   used = 0;
   recording = False;
   if (out_fd >= 0)
      VG_(close)(out_fd);
   out_fd = -1;
}

/* Valgrind runs a program that execve starts natively (the tool sees no
   more of the process, and its fini does not run), so what is buffered
   goes out first, after a record saying so. A failed execve returns and
   the recording goes on. */
static void lg_pre_syscall(ThreadId tid, UInt syscallno, UWord* args, UInt nArgs)
{
   if (syscallno != __NR_execve && syscallno != __NR_execveat)
      return;
   room(RECORD_MAX);
   put_u8('P');
   flush();
}

static void lg_post_syscall(ThreadId tid, UInt syscallno, UWord* args,
                            UInt nArgs, SysRes res)
{
}

/* ------------------------------------------------------------------ */
/* Options and life cycle                                              */
/* ------------------------------------------------------------------ */

static Bool lg_process_cmd_line_option(const HChar* arg)
{
   if VG_STR_CLO(arg, "--lg-out", clo_out) {}
   else if VG_BOOL_CLO(arg, "--instr-atstart", clo_instr_atstart) {}
   else
      return False;
   return True;
}

static void lg_print_usage(void)
{
   VG_(printf)(
"    --lg-out=<file>           write the raw event stream to <file> (a FIFO\n"
"                              that `linegrind record` reads) [required]\n"
"    --instr-atstart=no|yes    record from the start? [yes]\n"
   );
}

static void lg_print_debug_usage(void)
{
   VG_(printf)("    (none)\n");
}

static void lg_post_clo_init(void)
{
   /* Callgrind's superblocks and code: they end at every branch, a loop of
      one block is not unrolled into one, and only the stack pointer is
      kept exact at each memory access. A load whose register is written
      again before anything reads it is then dropped from the code, as
      under Callgrind, which counts no read for it (a `pop` that only
      moves the stack pointer back). A faulting access leaves the
      instruction pointer where it was last set, most often at the start
      of the block, which runs again from there when a handler that mends
      the fault returns: its registers are computed again, as under
      Callgrind. (Valgrind's default keeps the instruction pointer exact
      and other registers not: the program resumed at the faulting
      instruction with stale registers and computed wrong results.) */
   VG_(clo_vex_control).guest_chase = False;
   VG_(clo_vex_control).iropt_unroll_thresh = 0;
   VG_(clo_vex_control).iropt_register_updates_default = VexRegUpdSpAtMemAccess;
   VG_(clo_px_file_backed) = VexRegUpdSpAtMemAccess;
   /* Bad options found this late are reported, not fatal: stop here, as
      a run that records nothing has no purpose. */
   if (clo_out == NULL) {
      VG_(fmsg)("linegrind needs --lg-out=<file>\n");
      VG_(exit)(1);
   }
   SysRes res = VG_(open)(clo_out, VKI_O_WRONLY | VKI_O_CREAT | VKI_O_TRUNC,
                          VKI_S_IRUSR | VKI_S_IWUSR | VKI_S_IRGRP | VKI_S_IROTH);
   if (sr_isError(res)) {
      VG_(fmsg)("linegrind: cannot open %s for writing\n", clo_out);
      VG_(exit)(1);
   }
   out_fd = VG_(safe_fd)(sr_Res(res));
   buffer = VG_(malloc)("lg.buffer", BUFFER_SIZE);
   put_u8('L');
   put_u8('G');
   put_u8('R');
   put_u8('1');
   set_recording(clo_instr_atstart);
   if (!clo_instr_atstart) {
      /* Say so even though nothing changed. */
      put_u8('I');
      put_u8(0);
   }
}

/* Valgrind passes 0 whatever the program's exit code; the recorder takes
   the exit status of the Valgrind process instead. The end's record gives
   the address the last thread to run stopped at (for a program that a
   fault killed, as a signal's record gives it) and whether the last run
   had ended. */
static void lg_fini(Int exitcode)
{
   room(RECORD_MAX);
   put_u8('E');
   put_u64(last_tid == VG_INVALID_THREADID ? 0 : VG_(get_IP)(last_tid));
   put_u8(run_ended);
   flush();
   if (out_fd >= 0)
      VG_(close)(out_fd);
   out_fd = -1;
}

static void lg_pre_clo_init(void)
{
   VG_(details_name)("linegrind");
   VG_(details_version)(NULL);
   VG_(details_description)("a trace recorder for linegrind");
   VG_(details_copyright_author)("Copyright (C) 2026, the linegrind authors.");
   VG_(details_bug_reports_to)(VG_BUGS_TO);
   VG_(details_avg_translation_sizeB)(500);

   VG_(basic_tool_funcs)(lg_post_clo_init, lg_instrument, lg_fini);
   VG_(needs_command_line_options)(lg_process_cmd_line_option,
                                   lg_print_usage, lg_print_debug_usage);
   VG_(needs_client_requests)(lg_client_request);
   VG_(track_start_client_code)(lg_start_client_code);
   VG_(track_pre_thread_ll_exit)(lg_pre_thread_ll_exit);
   VG_(track_pre_deliver_signal)(lg_pre_deliver_signal);
   VG_(track_post_deliver_signal)(lg_post_deliver_signal);
   VG_(atfork)(NULL, NULL, lg_atfork_child);
   VG_(needs_syscall_wrapper)(lg_pre_syscall, lg_post_syscall);
}

VG_DETERMINE_INTERFACE_VERSION(lg_pre_clo_init)
