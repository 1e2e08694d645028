/* Whole-token numbers for the selector's text files (traces, models):
 * the token must be a number and nothing else.  0 on success, -1 else. */
#ifndef STARCOLL_SELECTOR_TOKENS_H
#define STARCOLL_SELECTOR_TOKENS_H
int sc_token_long(const char *s, long *out);
int sc_token_double(const char *s, double *out);   /* finite only */
#endif
