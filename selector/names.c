/* Names of modes, causes and feature columns. */
#include "names.h"

#include <string.h>

static const char *const mode_names[SC_NMODES] = {"sync", "hier", "quorum", "groups", "auto"};
static const char *const cause_names[] = {"none", "cpu", "network", "work"};

/* Order follows enum sc_feature_index in sc_features.h. */
static const char *const feature_names[SC_NFEAT] = {
    "step_s",   "compute_s",     "wait_s",     "away_s",     "cpu_s",          "runq_s",    "nvcsw",      "throttled_s",
    "nic_tx_bps", "nic_rx_bps",  "nic_speed_bps", "ib_wait_ps",  "bytes",     "grad_sqnorm",
    "sum_sqnorm", "link_spb",    "papi0",       "papi1",      "papi2",          "papi3",
    "arrive_s", "lag_s",         "app_runq_s"};

const char *sc_sel_mode_name(sc_mode mode)
{
    if ((int)mode < 0 || mode >= SC_NMODES)
        return "?";
    return mode_names[mode];
}

int sc_sel_mode_parse(const char *name, sc_mode *out)
{
    if (!name)
        return -1;
    for (int m = 0; m < SC_NMODES; m++) {
        if (strcmp(name, mode_names[m]) == 0) {
            *out = (sc_mode)m;
            return 0;
        }
    }
    return -1;
}

const char *sc_sel_cause_name(sc_cause cause)
{
    if ((int)cause < 0 || (int)cause >= (int)(sizeof cause_names / sizeof cause_names[0]))
        return "?";
    return cause_names[cause];
}

const char *sc_sel_feature_name(int idx)
{
    if (idx < 0 || idx >= SC_NFEAT)
        return NULL;
    return feature_names[idx];
}

int sc_sel_feature_parse(const char *name)
{
    if (!name)
        return -1;
    for (int i = 0; i < SC_NFEAT; i++)
        if (strcmp(name, feature_names[i]) == 0)
            return i;
    return -1;
}
