#include "eligibility.h"

size_t sc_dkind_size(sc_dkind k)
{
    return k == SC_DK_FLOAT ? sizeof(float) : k == SC_DK_DOUBLE ? sizeof(double) : 0;
}

static int named_exact(const sc_call_shape *c, const sc_exact_list *exact)
{
    for (int i = 0; exact && i < exact->n; i++)
        if (exact->count[i] == c->count && (exact->dkind[i] == SC_DK_OTHER || exact->dkind[i] == c->dkind)) return 1;
    return 0;
}

sc_elig sc_eligibility(const sc_call_shape *c, size_t min_bytes, const sc_exact_list *exact)
{
    if (!c->op_is_sum) return SC_ELIG_NOT_SUM;
    if (c->dkind == SC_DK_OTHER) return SC_ELIG_DATATYPE;
    if (c->is_inter) return SC_ELIG_INTERCOMM;
    if (c->comm_size < 2) return SC_ELIG_COMM_SIZE;
    if (c->count <= 0) return SC_ELIG_COUNT;
    if (c->aliased) return SC_ELIG_ALIAS;
    if (named_exact(c, exact)) return SC_ELIG_NAMED;
    if ((size_t)c->count * sc_dkind_size(c->dkind) < min_bytes) return SC_ELIG_SMALL;
    return SC_ELIG_OK;
}

const char *sc_elig_reason(sc_elig e)
{
    static const char *const why[SC_ELIG_NREASONS] = {
        "eligible", "op is not MPI_SUM", "datatype is not MPI_FLOAT or MPI_DOUBLE",
        "intercommunicator", "communicator of one rank", "empty call",
        "below STARCOLL_MIN_BYTES", "sendbuf aliases recvbuf", "named in STARCOLL_EXACT",
        "two threads at once on one communicator"};
    return (e >= 0 && e < SC_ELIG_NREASONS) ? why[e] : "?";
}
