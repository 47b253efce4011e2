/*
 * The SIGBUS guard around reads of the model's mapping (see guard.h).
 *
 * The handler finds the read it interrupted through a thread-local: a
 * signal handler has no other way to reach its thread's state, so this is
 * the one piece of state outside main. SA_NODEFER keeps SIGBUS unblocked
 * while the handler runs, so leaving it by siglongjmp needs no saved mask
 * (and the guarded read no sigprocmask call).
 */
#define _GNU_SOURCE // SA_NODEFER, siginfo_t

#include <setjmp.h>
#include <signal.h>
#include <stddef.h>

#include "model/guard.h"

static _Thread_local sigjmp_buf *guarded_read;

static void on_sigbus(int sig, siginfo_t *info, void *context)
{
    (void)info, (void)context;
    sigjmp_buf *resume = guarded_read;
    if (resume)
        siglongjmp(*resume, 1);
    // Not ours: back to the default action, which the faulting access
    // raises again on return.
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    sigaction(sig, &dfl, NULL);
}

bool ggfs_guard_install(void)
{
    struct sigaction sa = {.sa_sigaction = on_sigbus, .sa_flags = SA_SIGINFO | SA_NODEFER};
    sigemptyset(&sa.sa_mask);
    return sigaction(SIGBUS, &sa, NULL) == 0;
}

ggp_err ggfs_guarded_read_f32(const ggp_file *file, const ggp_tensor *t, uint64_t first,
                              uint64_t count, float *dst, bool *cut_short)
{
    sigjmp_buf resume;
    *cut_short = false;
    if (sigsetjmp(resume, 0) != 0) {
        guarded_read = NULL;
        *cut_short = true;
        return GGP_ERR_IO;
    }
    guarded_read = &resume;
    const ggp_err err = ggp_tensor_read_f32(file, t, first, count, dst);
    guarded_read = NULL;
    return err;
}

bool ggfs_guarded_run(void (*fn)(void *arg), void *arg)
{
    sigjmp_buf resume;
    if (sigsetjmp(resume, 0) != 0) {
        guarded_read = NULL;
        return false;
    }
    guarded_read = &resume;
    fn(arg);
    guarded_read = NULL;
    return true;
}
