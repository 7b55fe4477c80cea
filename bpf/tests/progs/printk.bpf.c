// SPDX-License-Identifier: MIT
/* trace_printk's formats, each program one format; bpf_kernel.c compares
 * each return value (the length printed, or -EINVAL for a format the
 * kernel refuses) with BPF_PROG_TEST_RUN's, bpf_loader.c checks a few. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

static const char who[] = "world";
static const unsigned char ip4[4] = {192, 168, 1, 7};
static const unsigned char ip6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0,    0,
                                      0,    0,    0,    0,    0, 0, 0xab, 1};

#define PRINTK_PROG(name, fmt, ...)                                                                \
	SEC("tc") int name(struct __sk_buff *ctx)                                                  \
	{                                                                                          \
		return bpf_printk(fmt, ##__VA_ARGS__);                                             \
	}

/* strings: read from the program's memory; an unreadable one prints empty */
PRINTK_PROG(str, "hello %s!", who)
PRINTK_PROG(str_unreadable, "[%s]", 12345)
PRINTK_PROG(str_width, "[%8s][%-7s]", who, who)
PRINTK_PROG(str_then_letter, "%sabc", who) /* refused */
PRINTK_PROG(str_kernel, "%pks", who)
/* numbers: flags, widths, lengths */
PRINTK_PROG(width, "%5d|%-5d|%08x", 42, 42, 0xbeef)
PRINTK_PROG(signs, "%+d % d %-08d|", 5, 6, 7)
PRINTK_PROG(longs, "%ld %lld %llx", -1, -2, 255)
PRINTK_PROG(wide, "%30d", 1)
PRINTK_PROG(hex_cases, "%X %x", 0xab, 0xcd)
PRINTK_PROG(percent, "%d%%%d%%%d", 1, 2, 3)
PRINTK_PROG(chars, "[%5c][%-3c][%05c]", 'a', 'b', 'c')
/* pointers */
PRINTK_PROG(ptr, "p=%p:", 0)
PRINTK_PROG(ptr_kinds, "%px %pK", 0x1234, 0x1234)
PRINTK_PROG(ptr_symbol, "%pB %pS %ps", 0x1234, 0x1234, 0x1234)
PRINTK_PROG(ptr_swallows, "%pKx|%pBb", 0x1234, 0x1234)
PRINTK_PROG(ptr_width, "%20px|%-20p|", 0x1234, 0)
PRINTK_PROG(ip, "%pI4 %pi4", ip4, ip4)
PRINTK_PROG(ip6_full, "%pI6", ip6)
PRINTK_PROG(ip6_plain, "%pi6", ip6)
PRINTK_PROG(ip_unreadable, "%pI4", 0x1234)
/* refused: -EINVAL */
PRINTK_PROG(precision, "%.2d", 5)
PRINTK_PROG(alt_form, "%#x", 5)
PRINTK_PROG(short_int, "%hd", 7)
PRINTK_PROG(size_t_len, "%zd", 7)
PRINTK_PROG(three_l, "%lllx", 7)
PRINTK_PROG(ptr_letter, "%p1", 0)
PRINTK_PROG(ptr_unknown, "%pE", 0)
PRINTK_PROG(control_char, "a\x01b")
PRINTK_PROG(lone_percent, "ab%")

char _license[] SEC("license") = "GPL";
