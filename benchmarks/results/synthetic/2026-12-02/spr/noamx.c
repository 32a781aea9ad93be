/* LD_PRELOAD shim: refuses arch_prctl(ARCH_REQ_XCOMP_PERM), so onnxruntime (MLAS) cannot use AMX tiles and
   falls back to its AVX-512 VNNI int8 kernels. Build: gcc -shared -fPIC -O2 -o noamx.so noamx.c -ldl (see amx.py). */
#define _GNU_SOURCE
#include <stdarg.h>
#include <errno.h>
#include <dlfcn.h>
#include <sys/syscall.h>
long syscall(long n, ...) {
    va_list ap; va_start(ap, n);
    long a[6]; for (int i = 0; i < 6; i++) a[i] = va_arg(ap, long);
    va_end(ap);
    if (n == SYS_arch_prctl && a[0] == 0x1023) { errno = EPERM; return -1; }  /* ARCH_REQ_XCOMP_PERM */
    static long (*real)(long, ...) = 0;
    if (!real) real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
    return real(n, a[0], a[1], a[2], a[3], a[4], a[5]);
}
