/* Client requests for linegrind: mark named sections of a run.

   #include "linegrind.h"
   LINEGRIND_BEGIN("paint");
   ...
   LINEGRIND_END("paint");

   Outside linegrind (natively or under another Valgrind tool) the macros
   do nothing and cost a few instructions. Callgrind's
   CALLGRIND_START_INSTRUMENTATION / CALLGRIND_STOP_INSTRUMENTATION from
   callgrind.h are honoured too.

   This header is BSD-style licensed like valgrind.h, so that programs of
   any license can include it:

   Copyright (C) 2026 the linegrind authors. All rights reserved.

   Redistribution and use in source and binary forms, with or without
   modification, are permitted provided that the following conditions are
   met:

   1. Redistributions of source code must retain the above copyright
      notice, this list of conditions and the following disclaimer.
   2. Redistributions in binary form must reproduce the above copyright
      notice, this list of conditions and the following disclaimer in the
      documentation and/or other materials provided with the distribution.

   THIS SOFTWARE IS PROVIDED BY THE AUTHORS "AS IS" AND ANY EXPRESS OR
   IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE IMPLIED WARRANTIES
   OF MERCHANTABILITY AND FITNESS FOR A PARTICULAR PURPOSE ARE DISCLAIMED.
   IN NO EVENT SHALL THE AUTHORS BE LIABLE FOR ANY DIRECT, INDIRECT,
   INCIDENTAL, SPECIAL, EXEMPLARY, OR CONSEQUENTIAL DAMAGES (INCLUDING, BUT
   NOT LIMITED TO, PROCUREMENT OF SUBSTITUTE GOODS OR SERVICES; LOSS OF USE,
   DATA, OR PROFITS; OR BUSINESS INTERRUPTION) HOWEVER CAUSED AND ON ANY
   THEORY OF LIABILITY, WHETHER IN CONTRACT, STRICT LIABILITY, OR TORT
   (INCLUDING NEGLIGENCE OR OTHERWISE) ARISING IN ANY WAY OUT OF THE USE OF
   THIS SOFTWARE, EVEN IF ADVISED OF THE POSSIBILITY OF SUCH DAMAGE. */

#ifndef LINEGRIND_H
#define LINEGRIND_H

#include <valgrind/valgrind.h>

typedef enum {
   VG_USERREQ__LINEGRIND_BEGIN = VG_USERREQ_TOOL_BASE('L', 'G'),
   VG_USERREQ__LINEGRIND_END
} Vg_LinegrindClientRequest;

/* Start of the section `name` (a NUL-terminated string). */
#define LINEGRIND_BEGIN(name)                                            \
   VALGRIND_DO_CLIENT_REQUEST_STMT(VG_USERREQ__LINEGRIND_BEGIN,          \
                                   (name), 0, 0, 0, 0)

/* End of the section `name`. */
#define LINEGRIND_END(name)                                              \
   VALGRIND_DO_CLIENT_REQUEST_STMT(VG_USERREQ__LINEGRIND_END,            \
                                   (name), 0, 0, 0, 0)

#endif
