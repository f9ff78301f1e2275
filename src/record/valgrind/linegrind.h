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
   any license can include it. */

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
