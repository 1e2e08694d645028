/* Unit tests of report and trace files (plugin/outfile.c): an existing file
 * is never overwritten, a symbolic link never followed (nor a dangling
 * one's target created), a device is written as it is, and a failed write
 * shows at close. */
#include <CUnit/CUnit.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "outfile.h"
#include "cunit_main.h"

static char dir[256];

static void path_in(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", dir, name);
}

static void test_new_file(void)
{
    char p[300], used[400], note[600];
    path_in(p, sizeof p, "new");
    FILE *f = sc_outfile_open(p, used, sizeof used, note, sizeof note);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_STRING_EQUAL(used, p);
    CU_ASSERT_STRING_EQUAL(note, "");
    fputs("report\n", f);
    CU_ASSERT_EQUAL(sc_outfile_close(f), 0);
}

static void test_existing_file_kept(void)
{
    char p[300], used[400], note[600], want[320];
    path_in(p, sizeof p, "existing");
    FILE *g = fopen(p, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    fputs("the user's\n", g);
    fclose(g);
    for (int i = 1; i <= 2; i++) {
        FILE *f = sc_outfile_open(p, used, sizeof used, note, sizeof note);
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        snprintf(want, sizeof want, "%s.%d", p, i);
        CU_ASSERT_STRING_EQUAL(used, want);
        CU_ASSERT_PTR_NOT_NULL(strstr(note, "exists"));
        CU_ASSERT_EQUAL(sc_outfile_close(f), 0);
    }
    char line[64] = "";
    g = fopen(p, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_PTR_NOT_NULL(fgets(line, sizeof line, g));
    fclose(g);
    CU_ASSERT_STRING_EQUAL(line, "the user's\n");
}

static void test_links_refused(void)
{
    char p[300], target[300], used[400], note[600];
    path_in(target, sizeof target, "target");
    path_in(p, sizeof p, "link");
    CU_ASSERT_EQUAL_FATAL(symlink(target, p), 0);
    CU_ASSERT_PTR_NULL(sc_outfile_open(p, used, sizeof used, note, sizeof note));
    CU_ASSERT_PTR_NOT_NULL(strstr(note, "symbolic link"));
    struct stat st;
    CU_ASSERT_NOT_EQUAL(lstat(target, &st), 0);   /* the dangling link's target was not created */
    FILE *t = fopen(target, "w");                  /* a link to an existing file: refused too */
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    fclose(t);
    CU_ASSERT_PTR_NULL(sc_outfile_open(p, used, sizeof used, note, sizeof note));
    CU_ASSERT_EQUAL(stat(target, &st), 0);
    CU_ASSERT_EQUAL(st.st_size, 0);
}

static void test_devices(void)
{
    char used[400], note[600];
    FILE *f = sc_outfile_open("/dev/null", used, sizeof used, note, sizeof note);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_STRING_EQUAL(used, "/dev/null");
    fputs("x\n", f);
    CU_ASSERT_EQUAL(sc_outfile_close(f), 0);
    if (access("/dev/full", W_OK) == 0) {
        f = sc_outfile_open("/dev/full", used, sizeof used, note, sizeof note);
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        fputs("a report\n", f);
        CU_ASSERT_EQUAL(sc_outfile_close(f), ENOSPC);   /* the failed write shows */
    }
}

static void test_no_folder(void)
{
    char used[400], note[600];
    CU_ASSERT_PTR_NULL(sc_outfile_open("/proc/no-such-folder/report", used, sizeof used, note, sizeof note));
    CU_ASSERT_PTR_NOT_NULL(strstr(note, "cannot create"));
}

int main(void)
{
    snprintf(dir, sizeof dir, "%s/starcoll-outfile-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) return 1;
    if (CU_initialize_registry() != CUE_SUCCESS) return 1;
    CU_pSuite s = CU_add_suite("report and trace files", NULL, NULL);
    CU_add_test(s, "a new file", test_new_file);
    CU_add_test(s, "an existing file is kept, a new name used", test_existing_file_kept);
    CU_add_test(s, "symbolic links are not followed", test_links_refused);
    CU_add_test(s, "devices, and a failed write", test_devices);
    CU_add_test(s, "a folder that does not exist", test_no_folder);
    int rc = sc_cunit_run();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return rc;
}
