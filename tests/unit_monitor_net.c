/* nic and ib sources: interface selection, speeds, deltas, word-to-byte
 * conversion, malformed and missing files. */
#define _GNU_SOURCE
#include "unit_monitor.h"

#include "ib_source.h"
#include "nic_source.h"

#include <CUnit/CUnit.h>
#include <stdio.h>
#include <string.h>

/* fixtures/good/sys/class/net/eth0 */
#define ETH0_TX 30459ull
#define ETH0_RX 1204553ull
#define ETH0_BPS (25000.0 * 1e6 / 8.0)
/* fixtures/good/sys/class/infiniband/mlx5_0/ports/1 */
#define IB_XMIT_WORDS 2500000ull
#define IB_RCV_WORDS 1000000ull
#define IB_WAIT 42ull
#define IB_BPS (100e9 / 8.0)

static char msg[2048];

static void sys_of(char *out, size_t cap, const char *root)
{
    fixture_path(out, cap, root, "sys");
}

static void nic_open_in(sc_nic_source *s, const char *root, const char *spec, int skip_ib)
{
    char sys[1024];
    sys_of(sys, sizeof sys, root);
    msg[0] = '\0';
    sc_nic_open(s, spec, sys, skip_ib, msg, sizeof msg);
}

static void set_counter(const char *root, const char *rel, unsigned long long v)
{
    char text[64];
    snprintf(text, sizeof text, "%llu\n", v);
    CU_ASSERT_EQUAL_FATAL(fixture_write(root, rel, text), 0);
}

static void test_nic_auto_selection(void)
{
    const char *root = fixture_copy("good");
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    sc_nic_source s;
    /* lo (loopback) and eth1 (down) are never followed. */
    nic_open_in(&s, root, NULL, 0);
    CU_ASSERT_TRUE(s.active);
    CU_ASSERT_EQUAL(s.mode, SC_NIC_AUTO);
    CU_ASSERT_EQUAL_FATAL(s.nlinks, 3);
    CU_ASSERT_STRING_EQUAL(s.links[0].name, "eth0");
    CU_ASSERT_STRING_EQUAL(s.links[1].name, "ib0");
    CU_ASSERT_STRING_EQUAL(s.links[2].name, "tun0");
    CU_ASSERT_EQUAL(s.links[0].tx, ETH0_TX);
    CU_ASSERT_EQUAL(s.links[0].rx, ETH0_RX);
    CU_ASSERT_DOUBLE_EQUAL(s.links[0].speed_Bps, ETH0_BPS, 0.0);
    CU_ASSERT_DOUBLE_EQUAL(s.links[1].speed_Bps, 100000.0 * 1e6 / 8.0, 0.0);
    CU_ASSERT_DOUBLE_EQUAL(s.links[2].speed_Bps, 0.0, 0.0);   /* no speed file */
    sc_nic_close(&s);
    /* With InfiniBand ports counted, IPoIB is left out and says so. */
    nic_open_in(&s, root, "auto", 1);
    CU_ASSERT_EQUAL_FATAL(s.nlinks, 2);
    CU_ASSERT_STRING_EQUAL(s.links[0].name, "eth0");
    CU_ASSERT_STRING_EQUAL(s.links[1].name, "tun0");
    CU_ASSERT_PTR_NOT_NULL(strstr(s.skipped, "ib0"));
    char text[512] = "";
    sc_nic_describe(&s, text, sizeof text);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "eth0 25000 Mb/s"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "tun0 speed unknown"));
    sc_nic_close(&s);
    /* Loopback is known by its name as well as by its type. */
    fixture_unlink(root, "sys/class/net/lo/type");
    nic_open_in(&s, root, "auto", 1);
    CU_ASSERT_EQUAL(s.nlinks, 2);
    CU_ASSERT_STRING_EQUAL(s.links[0].name, "eth0");
    sc_nic_close(&s);
    fixture_remove(root);
}

static void test_nic_deltas_and_speed(void)
{
    const char *root = fixture_copy("good");
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    sc_nic_source s;
    nic_open_in(&s, root, "auto", 1);
    set_counter(root, "sys/class/net/eth0/statistics/tx_bytes", ETH0_TX + 1000);
    set_counter(root, "sys/class/net/eth0/statistics/rx_bytes", ETH0_RX + 3000);
    sc_link_delta d;
    sc_nic_sample(&s, &d);
    CU_ASSERT_DOUBLE_EQUAL(d.tx_bytes, 1000.0, 0.0);
    CU_ASSERT_DOUBLE_EQUAL(d.rx_bytes, 3000.0, 0.0);
    CU_ASSERT_DOUBLE_EQUAL(d.busy_speed_Bps, ETH0_BPS, 0.0);
    CU_ASSERT_DOUBLE_EQUAL(d.max_speed_Bps, ETH0_BPS, 0.0);
    /* Only tun0 (speed unknown) moves: no busy speed, the fastest remains. */
    set_counter(root, "sys/class/net/tun0/statistics/tx_bytes", 150);
    sc_nic_sample(&s, &d);
    CU_ASSERT_DOUBLE_EQUAL(d.tx_bytes, 50.0, 0.0);
    CU_ASSERT_DOUBLE_EQUAL(d.rx_bytes, 0.0, 0.0);
    CU_ASSERT_DOUBLE_EQUAL(d.busy_speed_Bps, 0.0, 0.0);
    CU_ASSERT_DOUBLE_EQUAL(d.max_speed_Bps, ETH0_BPS, 0.0);
    /* A counter reset counts nothing, then counting resumes from there. */
    set_counter(root, "sys/class/net/eth0/statistics/tx_bytes", 10);
    sc_nic_sample(&s, &d);
    CU_ASSERT_DOUBLE_EQUAL(d.tx_bytes, 0.0, 0.0);
    set_counter(root, "sys/class/net/eth0/statistics/tx_bytes", 510);
    sc_nic_sample(&s, &d);
    CU_ASSERT_DOUBLE_EQUAL(d.tx_bytes, 500.0, 0.0);
    /* Counters that stop reading as numbers: the interface is dropped. */
    CU_ASSERT_EQUAL(fixture_write(root, "sys/class/net/eth0/statistics/tx_bytes", "gone\n"), 0);
    set_counter(root, "sys/class/net/tun0/statistics/rx_bytes", 207);
    sc_nic_sample(&s, &d);
    CU_ASSERT_TRUE(s.links[0].lost);
    CU_ASSERT_DOUBLE_EQUAL(d.rx_bytes, 7.0, 0.0);
    char text[512] = "";
    sc_nic_describe(&s, text, sizeof text);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "(gone)"));
    sc_nic_close(&s);
    fixture_remove(root);
}

static void test_nic_list(void)
{
    const char *root = fixture_copy("good");
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    sc_nic_source s;
    /* A named interface is followed even when auto would skip it. */
    nic_open_in(&s, root, " eth1 , nosuch,eth1,../net/eth0,,lo", 1);
    CU_ASSERT_TRUE(s.active);
    CU_ASSERT_EQUAL(s.mode, SC_NIC_LIST);
    CU_ASSERT_EQUAL_FATAL(s.nlinks, 2);
    CU_ASSERT_STRING_EQUAL(s.links[0].name, "eth1");
    CU_ASSERT_STRING_EQUAL(s.links[1].name, "lo");
    CU_ASSERT_DOUBLE_EQUAL(s.links[0].speed_Bps, 0.0, 0.0);   /* speed -1: unknown */
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "'nosuch'"));
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "'../net/eth0' is not an interface name"));
    sc_nic_close(&s);

    nic_open_in(&s, root, "nosuch,other", 0);
    CU_ASSERT_FALSE(s.active);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "nic: inactive"));
    sc_link_delta d;
    sc_nic_sample(&s, &d);
    CU_ASSERT_DOUBLE_EQUAL(d.tx_bytes + d.rx_bytes + d.max_speed_Bps, 0.0, 0.0);
    sc_nic_close(&s);

    nic_open_in(&s, root, "none", 0);
    CU_ASSERT_FALSE(s.active);
    CU_ASSERT_EQUAL(s.mode, SC_NIC_NONE);
    CU_ASSERT_STRING_EQUAL(msg, "");
    char text[256] = "";
    sc_nic_describe(&s, text, sizeof text);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "STARCOLL_NIC=none"));
    sc_nic_close(&s);
    fixture_remove(root);
}

static void test_nic_malformed(void)
{
    const char *root = fixture_copy("malformed");
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    sc_nic_source s;
    nic_open_in(&s, root, "auto", 0);
    CU_ASSERT_TRUE(s.active);
    CU_ASSERT_EQUAL_FATAL(s.nlinks, 2);
    CU_ASSERT_STRING_EQUAL(s.links[0].name, "eth0");
    CU_ASSERT_STRING_EQUAL(s.links[1].name, "eth3");
    CU_ASSERT_DOUBLE_EQUAL(s.links[0].speed_Bps, 0.0, 0.0);   /* -1 */
    CU_ASSERT_DOUBLE_EQUAL(s.links[1].speed_Bps, 0.0, 0.0);   /* "fast" */
    CU_ASSERT_PTR_NOT_NULL(strstr(s.skipped, "eth1 (byte counters are not numbers)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(s.skipped, "eth2 (no statistics"));
    sc_nic_close(&s);
    /* No class/net at all. */
    msg[0] = '\0';
    sc_nic_open(&s, "auto", "/nonexistent/starcoll/sys", 0, msg, sizeof msg);
    CU_ASSERT_FALSE(s.active);
    CU_ASSERT_PTR_NOT_NULL(strstr(s.why, "class/net"));
    sc_nic_close(&s);
    fixture_remove(root);
}

static void ib_open_in(sc_ib_source *s, const char *root)
{
    char sys[1024];
    sys_of(sys, sizeof sys, root);
    msg[0] = '\0';
    sc_ib_open(s, sys, msg, sizeof msg);
}

static void test_ib_words_to_bytes(void)
{
    const char *root = fixture_copy("good");
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    sc_ib_source s;
    ib_open_in(&s, root);
    CU_ASSERT_TRUE(s.active);
    CU_ASSERT_EQUAL_FATAL(s.nports, 1);   /* port 2 is DOWN */
    CU_ASSERT_STRING_EQUAL(s.ports[0].name, "mlx5_0:1");
    CU_ASSERT_PTR_NOT_NULL(strstr(s.skipped, "mlx5_0:2 (not ACTIVE)"));
    CU_ASSERT_EQUAL(s.ports[0].xmit_words, IB_XMIT_WORDS);
    CU_ASSERT_EQUAL(s.ports[0].rcv_words, IB_RCV_WORDS);
    CU_ASSERT_EQUAL(s.ports[0].wait, IB_WAIT);
    CU_ASSERT_DOUBLE_EQUAL(s.ports[0].speed_Bps, IB_BPS, 0.0);
    const char *counters = "sys/class/infiniband/mlx5_0/ports/1/counters/";
    char rel[256];
    snprintf(rel, sizeof rel, "%sport_xmit_data", counters);
    set_counter(root, rel, IB_XMIT_WORDS + 250);
    snprintf(rel, sizeof rel, "%sport_rcv_data", counters);
    set_counter(root, rel, IB_RCV_WORDS + 100);
    snprintf(rel, sizeof rel, "%sport_xmit_wait", counters);
    set_counter(root, rel, IB_WAIT + 8);
    sc_link_delta d;
    double wait;
    sc_ib_sample(&s, &d, &wait);
    CU_ASSERT_DOUBLE_EQUAL(d.tx_bytes, 1000.0, 0.0);
    CU_ASSERT_DOUBLE_EQUAL(d.rx_bytes, 400.0, 0.0);
    CU_ASSERT_DOUBLE_EQUAL(wait, 8.0, 0.0);
    CU_ASSERT_DOUBLE_EQUAL(d.busy_speed_Bps, IB_BPS, 0.0);
    sc_ib_sample(&s, &d, &wait);
    CU_ASSERT_DOUBLE_EQUAL(d.tx_bytes + d.rx_bytes + wait + d.busy_speed_Bps, 0.0, 0.0);
    CU_ASSERT_DOUBLE_EQUAL(d.max_speed_Bps, IB_BPS, 0.0);
    char text[512] = "";
    sc_ib_describe(&s, text, sizeof text);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "ib: active: mlx5_0:1 100 Gb/s"));
    sc_ib_close(&s);
    fixture_remove(root);
}

static void test_ib_rate_with_fraction(void)
{
    const char *root = fixture_copy("good");
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    CU_ASSERT_EQUAL(fixture_write(root, "sys/class/infiniband/mlx5_0/ports/1/rate", "2.5 Gb/sec (1X SDR)\n"), 0);
    sc_ib_source s;
    ib_open_in(&s, root);
    CU_ASSERT_EQUAL_FATAL(s.nports, 1);
    CU_ASSERT_DOUBLE_EQUAL(s.ports[0].speed_Bps, 2.5e9 / 8.0, 1e-3);
    sc_ib_close(&s);
    fixture_remove(root);
}

static void test_ib_malformed_and_missing(void)
{
    const char *root = fixture_copy("malformed");
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    sc_ib_source s;
    ib_open_in(&s, root);
    /* mlx5_0:1 has an empty port_xmit_data; mlx5_1:1 lacks port_xmit_wait
     * and has an unreadable rate. */
    CU_ASSERT_TRUE(s.active);
    CU_ASSERT_EQUAL_FATAL(s.nports, 1);
    CU_ASSERT_STRING_EQUAL(s.ports[0].name, "mlx5_1:1");
    CU_ASSERT_EQUAL(s.ports[0].fd_wait, -1);
    CU_ASSERT_DOUBLE_EQUAL(s.ports[0].speed_Bps, 0.0, 0.0);
    CU_ASSERT_PTR_NOT_NULL(strstr(s.skipped, "mlx5_0:1 (data counters missing or malformed)"));
    set_counter(root, "sys/class/infiniband/mlx5_1/ports/1/counters/port_xmit_data", 101);
    sc_link_delta d;
    double wait = -1;
    sc_ib_sample(&s, &d, &wait);
    CU_ASSERT_DOUBLE_EQUAL(d.tx_bytes, 4.0, 0.0);
    CU_ASSERT_DOUBLE_EQUAL(wait, 0.0, 0.0);
    char text[512] = "";
    sc_ib_describe(&s, text, sizeof text);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "no port_xmit_wait"));
    sc_ib_close(&s);

    fixture_unlink(root, "sys/class/infiniband");
    ib_open_in(&s, root);
    CU_ASSERT_FALSE(s.active);
    CU_ASSERT_PTR_NOT_NULL(strstr(s.why, "class/infiniband"));
    CU_ASSERT_STRING_EQUAL(msg, "");   /* no InfiniBand is normal: no notice */
    sc_ib_sample(&s, &d, &wait);
    CU_ASSERT_DOUBLE_EQUAL(d.tx_bytes + d.rx_bytes + d.max_speed_Bps + wait, 0.0, 0.0);
    sc_ib_close(&s);
    fixture_remove(root);
}

void unit_monitor_net_suite(void)
{
    CU_pSuite s = CU_add_suite("monitor nic and ib sources", NULL, NULL);
    CU_add_test(s, "nic auto selection", test_nic_auto_selection);
    CU_add_test(s, "nic deltas and speed", test_nic_deltas_and_speed);
    CU_add_test(s, "nic named list, none", test_nic_list);
    CU_add_test(s, "nic malformed and missing", test_nic_malformed);
    CU_add_test(s, "ib words to bytes", test_ib_words_to_bytes);
    CU_add_test(s, "ib rate with a fraction", test_ib_rate_with_fraction);
    CU_add_test(s, "ib malformed and missing", test_ib_malformed_and_missing);
}
