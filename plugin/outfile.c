#include "outfile.h"
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static FILE *wrap(int fd)
{
    if (fd < 0) return NULL;
    FILE *f = fdopen(fd, "w");
    if (!f) close(fd);
    return f;
}

FILE *sc_outfile_open(const char *path, char *used, size_t usedlen, char *note, size_t notelen)
{
    note[0] = '\0';
    snprintf(used, usedlen, "%s", path);
    struct stat st;
    if (lstat(path, &st) == 0) {
        if (S_ISLNK(st.st_mode)) {
            snprintf(note, notelen, "%s is a symbolic link, which starcoll does not follow", path);
            return NULL;
        }
        if (!S_ISREG(st.st_mode)) {   /* a device or a pipe: written as it is */
            FILE *f = wrap(open(path, O_WRONLY | O_NOFOLLOW | O_NOCTTY));
            if (!f) snprintf(note, notelen, "cannot open %s (%s)", path, strerror(errno));
            return f;
        }
        /* an existing file is never overwritten: the first free new name */
        for (int i = 1; i < 1000; i++) {
            char alt[4096];
            if ((size_t)snprintf(alt, sizeof alt, "%s.%d", path, i) >= sizeof alt) break;
            int fd = open(alt, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0666);
            if (fd < 0 && errno == EEXIST) continue;
            if (fd < 0) {
                snprintf(note, notelen, "%s exists, and %s cannot be created (%s)", path, alt, strerror(errno));
                return NULL;
            }
            snprintf(used, usedlen, "%s", alt);
            snprintf(note, notelen, "%s exists; writing %s instead", path, alt);
            return wrap(fd);
        }
        snprintf(note, notelen, "%s and its new names up to .999 exist", path);
        return NULL;
    }
    FILE *f = wrap(open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0666));
    if (!f) snprintf(note, notelen, "cannot create %s (%s)", path, strerror(errno));
    return f;
}

int sc_outfile_close(FILE *f)
{
    int err = 0;
    errno = 0;
    if (fflush(f) != 0 || ferror(f)) err = errno ? errno : EIO;
    errno = 0;
    if (fclose(f) != 0 && !err) err = errno ? errno : EIO;
    return err;
}
