/* SPDX-License-Identifier: MIT */
/*
 * ref_limit: how many locks one path may hold. The kernel keeps no fixed
 * limit (its references grow as needed); rqbpf holds up to
 * RQBPF_MAX_HELD (bpf/contract/prog.h). hold_70 takes 70 res locks (62
 * globals, each in its own section, and 8 elements of an array: the
 * kernel lets a program use at most 64 maps) and releases them in reverse
 * order, every failure releasing those taken before it.
 */
#include "common.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 8);
	__type(key, int);
	__type(value, struct elem);
} elems8 SEC(".maps");

struct bpf_res_spin_lock g0 HIDDEN SEC(".data.g0");
struct bpf_res_spin_lock g1 HIDDEN SEC(".data.g1");
struct bpf_res_spin_lock g2 HIDDEN SEC(".data.g2");
struct bpf_res_spin_lock g3 HIDDEN SEC(".data.g3");
struct bpf_res_spin_lock g4 HIDDEN SEC(".data.g4");
struct bpf_res_spin_lock g5 HIDDEN SEC(".data.g5");
struct bpf_res_spin_lock g6 HIDDEN SEC(".data.g6");
struct bpf_res_spin_lock g7 HIDDEN SEC(".data.g7");
struct bpf_res_spin_lock g8 HIDDEN SEC(".data.g8");
struct bpf_res_spin_lock g9 HIDDEN SEC(".data.g9");
struct bpf_res_spin_lock g10 HIDDEN SEC(".data.g10");
struct bpf_res_spin_lock g11 HIDDEN SEC(".data.g11");
struct bpf_res_spin_lock g12 HIDDEN SEC(".data.g12");
struct bpf_res_spin_lock g13 HIDDEN SEC(".data.g13");
struct bpf_res_spin_lock g14 HIDDEN SEC(".data.g14");
struct bpf_res_spin_lock g15 HIDDEN SEC(".data.g15");
struct bpf_res_spin_lock g16 HIDDEN SEC(".data.g16");
struct bpf_res_spin_lock g17 HIDDEN SEC(".data.g17");
struct bpf_res_spin_lock g18 HIDDEN SEC(".data.g18");
struct bpf_res_spin_lock g19 HIDDEN SEC(".data.g19");
struct bpf_res_spin_lock g20 HIDDEN SEC(".data.g20");
struct bpf_res_spin_lock g21 HIDDEN SEC(".data.g21");
struct bpf_res_spin_lock g22 HIDDEN SEC(".data.g22");
struct bpf_res_spin_lock g23 HIDDEN SEC(".data.g23");
struct bpf_res_spin_lock g24 HIDDEN SEC(".data.g24");
struct bpf_res_spin_lock g25 HIDDEN SEC(".data.g25");
struct bpf_res_spin_lock g26 HIDDEN SEC(".data.g26");
struct bpf_res_spin_lock g27 HIDDEN SEC(".data.g27");
struct bpf_res_spin_lock g28 HIDDEN SEC(".data.g28");
struct bpf_res_spin_lock g29 HIDDEN SEC(".data.g29");
struct bpf_res_spin_lock g30 HIDDEN SEC(".data.g30");
struct bpf_res_spin_lock g31 HIDDEN SEC(".data.g31");
struct bpf_res_spin_lock g32 HIDDEN SEC(".data.g32");
struct bpf_res_spin_lock g33 HIDDEN SEC(".data.g33");
struct bpf_res_spin_lock g34 HIDDEN SEC(".data.g34");
struct bpf_res_spin_lock g35 HIDDEN SEC(".data.g35");
struct bpf_res_spin_lock g36 HIDDEN SEC(".data.g36");
struct bpf_res_spin_lock g37 HIDDEN SEC(".data.g37");
struct bpf_res_spin_lock g38 HIDDEN SEC(".data.g38");
struct bpf_res_spin_lock g39 HIDDEN SEC(".data.g39");
struct bpf_res_spin_lock g40 HIDDEN SEC(".data.g40");
struct bpf_res_spin_lock g41 HIDDEN SEC(".data.g41");
struct bpf_res_spin_lock g42 HIDDEN SEC(".data.g42");
struct bpf_res_spin_lock g43 HIDDEN SEC(".data.g43");
struct bpf_res_spin_lock g44 HIDDEN SEC(".data.g44");
struct bpf_res_spin_lock g45 HIDDEN SEC(".data.g45");
struct bpf_res_spin_lock g46 HIDDEN SEC(".data.g46");
struct bpf_res_spin_lock g47 HIDDEN SEC(".data.g47");
struct bpf_res_spin_lock g48 HIDDEN SEC(".data.g48");
struct bpf_res_spin_lock g49 HIDDEN SEC(".data.g49");
struct bpf_res_spin_lock g50 HIDDEN SEC(".data.g50");
struct bpf_res_spin_lock g51 HIDDEN SEC(".data.g51");
struct bpf_res_spin_lock g52 HIDDEN SEC(".data.g52");
struct bpf_res_spin_lock g53 HIDDEN SEC(".data.g53");
struct bpf_res_spin_lock g54 HIDDEN SEC(".data.g54");
struct bpf_res_spin_lock g55 HIDDEN SEC(".data.g55");
struct bpf_res_spin_lock g56 HIDDEN SEC(".data.g56");
struct bpf_res_spin_lock g57 HIDDEN SEC(".data.g57");
struct bpf_res_spin_lock g58 HIDDEN SEC(".data.g58");
struct bpf_res_spin_lock g59 HIDDEN SEC(".data.g59");
struct bpf_res_spin_lock g60 HIDDEN SEC(".data.g60");
struct bpf_res_spin_lock g61 HIDDEN SEC(".data.g61");

SEC("?tc")
int hold_70(struct __sk_buff *ctx)
{
	struct elem *e0 = bpf_map_lookup_elem(&elems8, &(int){0});
	struct elem *e1 = bpf_map_lookup_elem(&elems8, &(int){1});
	struct elem *e2 = bpf_map_lookup_elem(&elems8, &(int){2});
	struct elem *e3 = bpf_map_lookup_elem(&elems8, &(int){3});
	struct elem *e4 = bpf_map_lookup_elem(&elems8, &(int){4});
	struct elem *e5 = bpf_map_lookup_elem(&elems8, &(int){5});
	struct elem *e6 = bpf_map_lookup_elem(&elems8, &(int){6});
	struct elem *e7 = bpf_map_lookup_elem(&elems8, &(int){7});

	if (!e0 || !e1 || !e2 || !e3 || !e4 || !e5 || !e6 || !e7)
		return 0;
	if (bpf_res_spin_lock(&g0))
		goto done;
	if (bpf_res_spin_lock(&g1))
		goto u0;
	if (bpf_res_spin_lock(&g2))
		goto u1;
	if (bpf_res_spin_lock(&g3))
		goto u2;
	if (bpf_res_spin_lock(&g4))
		goto u3;
	if (bpf_res_spin_lock(&g5))
		goto u4;
	if (bpf_res_spin_lock(&g6))
		goto u5;
	if (bpf_res_spin_lock(&g7))
		goto u6;
	if (bpf_res_spin_lock(&g8))
		goto u7;
	if (bpf_res_spin_lock(&g9))
		goto u8;
	if (bpf_res_spin_lock(&g10))
		goto u9;
	if (bpf_res_spin_lock(&g11))
		goto u10;
	if (bpf_res_spin_lock(&g12))
		goto u11;
	if (bpf_res_spin_lock(&g13))
		goto u12;
	if (bpf_res_spin_lock(&g14))
		goto u13;
	if (bpf_res_spin_lock(&g15))
		goto u14;
	if (bpf_res_spin_lock(&g16))
		goto u15;
	if (bpf_res_spin_lock(&g17))
		goto u16;
	if (bpf_res_spin_lock(&g18))
		goto u17;
	if (bpf_res_spin_lock(&g19))
		goto u18;
	if (bpf_res_spin_lock(&g20))
		goto u19;
	if (bpf_res_spin_lock(&g21))
		goto u20;
	if (bpf_res_spin_lock(&g22))
		goto u21;
	if (bpf_res_spin_lock(&g23))
		goto u22;
	if (bpf_res_spin_lock(&g24))
		goto u23;
	if (bpf_res_spin_lock(&g25))
		goto u24;
	if (bpf_res_spin_lock(&g26))
		goto u25;
	if (bpf_res_spin_lock(&g27))
		goto u26;
	if (bpf_res_spin_lock(&g28))
		goto u27;
	if (bpf_res_spin_lock(&g29))
		goto u28;
	if (bpf_res_spin_lock(&g30))
		goto u29;
	if (bpf_res_spin_lock(&g31))
		goto u30;
	if (bpf_res_spin_lock(&g32))
		goto u31;
	if (bpf_res_spin_lock(&g33))
		goto u32;
	if (bpf_res_spin_lock(&g34))
		goto u33;
	if (bpf_res_spin_lock(&g35))
		goto u34;
	if (bpf_res_spin_lock(&g36))
		goto u35;
	if (bpf_res_spin_lock(&g37))
		goto u36;
	if (bpf_res_spin_lock(&g38))
		goto u37;
	if (bpf_res_spin_lock(&g39))
		goto u38;
	if (bpf_res_spin_lock(&g40))
		goto u39;
	if (bpf_res_spin_lock(&g41))
		goto u40;
	if (bpf_res_spin_lock(&g42))
		goto u41;
	if (bpf_res_spin_lock(&g43))
		goto u42;
	if (bpf_res_spin_lock(&g44))
		goto u43;
	if (bpf_res_spin_lock(&g45))
		goto u44;
	if (bpf_res_spin_lock(&g46))
		goto u45;
	if (bpf_res_spin_lock(&g47))
		goto u46;
	if (bpf_res_spin_lock(&g48))
		goto u47;
	if (bpf_res_spin_lock(&g49))
		goto u48;
	if (bpf_res_spin_lock(&g50))
		goto u49;
	if (bpf_res_spin_lock(&g51))
		goto u50;
	if (bpf_res_spin_lock(&g52))
		goto u51;
	if (bpf_res_spin_lock(&g53))
		goto u52;
	if (bpf_res_spin_lock(&g54))
		goto u53;
	if (bpf_res_spin_lock(&g55))
		goto u54;
	if (bpf_res_spin_lock(&g56))
		goto u55;
	if (bpf_res_spin_lock(&g57))
		goto u56;
	if (bpf_res_spin_lock(&g58))
		goto u57;
	if (bpf_res_spin_lock(&g59))
		goto u58;
	if (bpf_res_spin_lock(&g60))
		goto u59;
	if (bpf_res_spin_lock(&g61))
		goto u60;
	if (bpf_res_spin_lock(&e0->lock))
		goto u61;
	if (bpf_res_spin_lock(&e1->lock))
		goto u62;
	if (bpf_res_spin_lock(&e2->lock))
		goto u63;
	if (bpf_res_spin_lock(&e3->lock))
		goto u64;
	if (bpf_res_spin_lock(&e4->lock))
		goto u65;
	if (bpf_res_spin_lock(&e5->lock))
		goto u66;
	if (bpf_res_spin_lock(&e6->lock))
		goto u67;
	if (bpf_res_spin_lock(&e7->lock))
		goto u68;
u69:
	bpf_res_spin_unlock(&e7->lock);
u68:
	bpf_res_spin_unlock(&e6->lock);
u67:
	bpf_res_spin_unlock(&e5->lock);
u66:
	bpf_res_spin_unlock(&e4->lock);
u65:
	bpf_res_spin_unlock(&e3->lock);
u64:
	bpf_res_spin_unlock(&e2->lock);
u63:
	bpf_res_spin_unlock(&e1->lock);
u62:
	bpf_res_spin_unlock(&e0->lock);
u61:
	bpf_res_spin_unlock(&g61);
u60:
	bpf_res_spin_unlock(&g60);
u59:
	bpf_res_spin_unlock(&g59);
u58:
	bpf_res_spin_unlock(&g58);
u57:
	bpf_res_spin_unlock(&g57);
u56:
	bpf_res_spin_unlock(&g56);
u55:
	bpf_res_spin_unlock(&g55);
u54:
	bpf_res_spin_unlock(&g54);
u53:
	bpf_res_spin_unlock(&g53);
u52:
	bpf_res_spin_unlock(&g52);
u51:
	bpf_res_spin_unlock(&g51);
u50:
	bpf_res_spin_unlock(&g50);
u49:
	bpf_res_spin_unlock(&g49);
u48:
	bpf_res_spin_unlock(&g48);
u47:
	bpf_res_spin_unlock(&g47);
u46:
	bpf_res_spin_unlock(&g46);
u45:
	bpf_res_spin_unlock(&g45);
u44:
	bpf_res_spin_unlock(&g44);
u43:
	bpf_res_spin_unlock(&g43);
u42:
	bpf_res_spin_unlock(&g42);
u41:
	bpf_res_spin_unlock(&g41);
u40:
	bpf_res_spin_unlock(&g40);
u39:
	bpf_res_spin_unlock(&g39);
u38:
	bpf_res_spin_unlock(&g38);
u37:
	bpf_res_spin_unlock(&g37);
u36:
	bpf_res_spin_unlock(&g36);
u35:
	bpf_res_spin_unlock(&g35);
u34:
	bpf_res_spin_unlock(&g34);
u33:
	bpf_res_spin_unlock(&g33);
u32:
	bpf_res_spin_unlock(&g32);
u31:
	bpf_res_spin_unlock(&g31);
u30:
	bpf_res_spin_unlock(&g30);
u29:
	bpf_res_spin_unlock(&g29);
u28:
	bpf_res_spin_unlock(&g28);
u27:
	bpf_res_spin_unlock(&g27);
u26:
	bpf_res_spin_unlock(&g26);
u25:
	bpf_res_spin_unlock(&g25);
u24:
	bpf_res_spin_unlock(&g24);
u23:
	bpf_res_spin_unlock(&g23);
u22:
	bpf_res_spin_unlock(&g22);
u21:
	bpf_res_spin_unlock(&g21);
u20:
	bpf_res_spin_unlock(&g20);
u19:
	bpf_res_spin_unlock(&g19);
u18:
	bpf_res_spin_unlock(&g18);
u17:
	bpf_res_spin_unlock(&g17);
u16:
	bpf_res_spin_unlock(&g16);
u15:
	bpf_res_spin_unlock(&g15);
u14:
	bpf_res_spin_unlock(&g14);
u13:
	bpf_res_spin_unlock(&g13);
u12:
	bpf_res_spin_unlock(&g12);
u11:
	bpf_res_spin_unlock(&g11);
u10:
	bpf_res_spin_unlock(&g10);
u9:
	bpf_res_spin_unlock(&g9);
u8:
	bpf_res_spin_unlock(&g8);
u7:
	bpf_res_spin_unlock(&g7);
u6:
	bpf_res_spin_unlock(&g6);
u5:
	bpf_res_spin_unlock(&g5);
u4:
	bpf_res_spin_unlock(&g4);
u3:
	bpf_res_spin_unlock(&g3);
u2:
	bpf_res_spin_unlock(&g2);
u1:
	bpf_res_spin_unlock(&g1);
u0:
	bpf_res_spin_unlock(&g0);
done:
	return 0;
}

char _license[] SEC("license") = "GPL";
