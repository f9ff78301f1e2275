/* Calls vfork three times, for the recorder's tests: glibc's vfork pops its
   return address before its system call and pushes it back after, so that
   the stack pointer leaves its frame and the code after is its call going
   on. */
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
    for (int i = 0; i < 3; i++) {
        pid_t child = vfork();
        if (child == 0)
            _exit(0);
        waitpid(child, 0, 0);
    }
    return 0;
}
