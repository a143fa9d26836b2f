"""Differential: on each snippet, ptxas and our parser agree on whether it is a syntax error, and on the
line and the token it is reported near ("Parsing error near 'x': syntax error")."""

from __future__ import annotations

import os
import random
import re
import subprocess
from pathlib import Path

import pytest

from mbarrier.ptx.diagnostics import PtxSyntaxError
from mbarrier.ptx.parser import parse

HEAD = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k()
{
.reg .b32 %r<5>;
.reg .pred %p<3>;
.reg .f32 %f<3>;
.reg .b64 %rd<3>;
.shared .b32 sym[4];
"""
TAIL = "\nret;\n}\n"
BODY_LINE = HEAD.count("\n") + 1

# Statements placed in a kernel body.
BODY = [
    "mov.u32 %r1, 09;", "mov.f32 %f1, -0f3F800000;", "mov.f32 %f1, 1.5;", "mov.f32 %f1, 1e3;",
    "mov .u32 %r1, 1;", "ld.shared.u32 %r1, [sym+4+4];", "mov.u32 %r1, 1;;", "@ !%p1 bra k;",
    "{ }", "add.u32 %r1, %r2, (1<<3);", "ld.shared.u32 %r1, [sym+-4];", "ld.shared.u32 %r1, [sym+(4)];",
    "mov.u32 %r1, sym+4;", "mov.u32 %r1, 0xU;", "mov.u32 %r1, 1U;", "mov.u32 %r1, 0b11;",
    "mov.u32 %r1, %r2\n;", "mov.u32\n%r1, %r2;", "mov.u32 %r1, -0x1;", "mov.u32 %r1, !1;",
    "mov.u32 %r1, ~1;", "mov.f32 %f1, .5;", "ld.shared.u32 %r1, [ %r2 + 4 ];", "mov.u32 %r1,%tid . x;",
    "mov.u32 %r1, %tid.x;", "mov.u32 %r1, % r1;", "ld.shared.u32 %r1, [%r2+%r3];",
    "ld.shared.u32 %r1, [4+sym];", "mov.f32 %f1, -1.5;", "mov.f32 %f1, 1.;", "mov.f32 %f1, 0F3F800000;",
    "mov.u32 %r1, 0X1f;", "ld.shared.u32 %r1, [sym-1+2];", "ld.shared.u32 %r1, [sym+4*2];",
    "mov.u32 %r1, (1<<3)+sym;", "mov.u32 %r1, -(-1);", "mov.u32 %r1, 1 ? 2 : 3;", "mov.u32 %r1, 5/0;",
    ".shared .b8 .align 8 x1[8];", ".shared .align 8 .v2 .b32 x2;", ".shared .v2 .align 8 .b32 x3;",
    ".reg .b32 .v2 w;", ".reg .b32 x, y, z;", ".local .align 8 .b8 arr[2][3];",
    ".reg .b32 %q<2>[2];", ".reg .b32 q[2]<2>;", ".shared .b32 .b32 y2;", "L: L2: ret;",
    "mov.u32 %r1, sym-4;", "mov.u32 %r1, sym*4;", "mov.u32 %r1, (sym);", "mov.u32 %r1, 4 +;",
    "ld.shared.u32 %r1, [sym+(1?2:3)];", "ld.shared.u32 %r1, [sym-4];", "ld.shared.u32 %r1, [%rd1-4];",
    "ld.shared.u32 %r1, [%rd1+ -4];", "setp.eq.u32 %p1|%p2, %r1, %r2;", "setp.eq.u32 %p1 | %p2, %r1, %r2;",
    "setp.eq.u32 %p1|1, %r1, %r2;", "setp.eq.u32 _|%p2, %r1, %r2;", "setp.eq.u32 %p1|_, %r1, %r2;",
    "setp.eq.u32 _|_, %r1, %r2;", "setp.eq.u32 _ | %p2, %r1, %r2;", "mov.b64 %rd1, {};",
    "mov.b64 %rd1, {%r1, {%r2}};",
    "mov.b64 %rd1, {[%r1]};", "mov.b64 %rd1, {!%p1, %r1};", "mov.u32 %r1, %tid.x+4;",
    "mov.f32 %f1, -(1.5);", "mov.f32 %f1, - 1.5;", "add.u32 %r1, -%r2, 1;", "mov.pred %p1, !%p2;",
    "mov.u32 %r1, [%r2;", "mov.u32 %r1 %r2;", "mov.u32 %r1, ;", "#", "@ mov.u32 %r1, 1;",
    "mbarrier.arrive.shared::cta.b64 _, [%rd1];",
    "mbarrier.try_wait.parity.shared::cta.b64 %p1, [%rd1], %r1, 0x989680;",
    "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1], 16, [%r2];",
    "mov.b64 {%r1, %r2}, %rd1;", "mov.b64 %rd1, {%r1, _};", "{ .reg .pred p; @p bra k; }",
    "mov.u32 %r1, 'a';", "mov.u32 %r1, \"s\";", "ld.shared.u32 %r1, [sym] ;", "ld.shared.u32 %r1, [];",
    "ld.shared.u32 %r1, [%r1+];", "L:", "$x: mov.u32 %r1, 1;", "mov.u32 %r1, 1 /* c */ ;",
    "mov.u32 %r1, 1; // c", "bra.uni k; }", ".pragma \"nounroll\";", ".loc 1 2 3", ".reg .b32 r<>;",
    ".reg .b32 a = 1;", ".shared .align .b32 z;", "mov.u32 %r1, 0x1ffffffffffffffff;",
    "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
    " [%r1], [%rd1, {%r2, %r3}], [%r4];",
    "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
    " [%r1], [%rd1, %r2], [%r4];",
    "mov.u32 %r1, .5e3;", "mov.u32 %r1, 1.5.5;", "ld.shared.u32 %r1, [sym+1.5];",
    # found by sweeping mutated real modules through both (see the report of issue 3)
    "_;", "_foo;", "$x;", "mov.f32 %f1, 0f402200000;", "mov.u32 %r1, %f.foo;", "mov.u32 %r1, %f.shared;",
    "mov.u32 %r1, %f.x.y;", "mov.u32 %r1, %f.b32;", "mov.u32 %r1, %f.align 8;",
    "call.uni (%r1), f, (%r2), 1;", "call.uni f, %r1;", "call.uni (%r1, %r2), f;", "call.uni f;",
    "call.uni f, (1);", "call.uni f, (%r1+1);", "call.uni f, ([%r1]);", "call.uni f,(%r2),g,h;",
    "call.uni (_), f;", "call.uni f, (-1);", "call.uni f, ({%r1});", "call (%r1),\n{add.f16 %r1, %r2;",
    ".loc 1 2 3 +", ".loc 1 2", ".loc 1 2 -3", ".loc 1 2 0x3", ".loc 1 2 3 4", ".loc 1 2 3, inlined_at 1 2 3",
    ".loc 1 2 3, function_name f", '.file 1 "a.cu"', '.pragma "nounroll"', '.pragma "a", "b";',
    ".maxnreg 32", ".maxntid 32, 1, 1", ".align 8 .reg .b32 q;", ".align 8", ".b32 qq;",
    ".extern .func f(.param .b32 a);", ".func g;", ".func h() { ret; }",
    "mbarrier._test_wait.shared.b64 %p1, [%rd1], %rd2;", ".reg .f32 %g<-5>;", "@_ bra k;",
    "ld.0xparam.b64 %rd1, [%rd2];", "shr.u64 %rd1, %rd2.shared::cta8, 2;", "st.shared.u32 [sym.5lot], %r1;",
    "tcgen05.ld.sync.aligned.16x64b.x1.b32 {%r1}, [%r2];", "mov.u32 %r1, 1.5d;",
    "call.uni (%r1), f.v2iced, (%r2);", "call.uni (%r1), f.x, (%r2);", ".func f2(.param .b32 a)\nret;",
    # found by compiling CUDA features and hand-written PTX through both (tex with the residency
    # predicate, vmad's negated components, components after blanks; pairs only first)
    "tex.2d.v4.f32.f32 {%f1, %f2, %f1, %f2}|%p1, [%rd1, {%f1, %f2}];",
    "tld4.r.2d.v4.f32.f32 {%f1, %f2, %f1, %f2} | %p1, [%rd1, {%f1, %f2}];",
    "tex.2d.v4.f32.f32 {%f1, %f2, %f1, %f2}|_, [%rd1, {%f1, %f2}];",
    "tex.2d.v4.f32.f32 {%f1, %f2, %f1, %f2}|%p1.x, [%rd1, {%f1, %f2}];",
    "mov.b64 %rd1, {%r1, %r2}|%p1;", "mov.b32 %r1, %r2|%p1;", "mov.b32 %r1|%p1, %r2|%p2;",
    "mov.b64 {%p1|%p2, %r1}, %rd1;", "ld.shared.b32 %r1, [sym], %r1|%p1;",
    "vmad.s32.s32.s32.shr7 %r1, %r2.h0, -%r3.b2, -%r4;", "add.s32 %r1, -%tid.x, 1;",
    "add.s32 %r1, -%tid.x.y, 1;", "add.s32 %r1, -_, 1;", "add.s32 %r1, !%r2.x, 1;",
    "selp.b32 %r1, 1, 0, !_;", "selp.b32 %r1, 1, 0, !%p1|%p2;", "selp.b32 %r1, 1, 0, !sym+4;",
    "selp.b32 %r1, 1, 0, !-1;", "selp.b32 %r1, 1, 0, !!%p1;", "selp.b32 %r1, 1, 0, ![%p1];",
    "mov.u32 %r1, %tid .x;", "mov.u32 %r1, %tid\n.x;", "vmad.s32.s32.s32 %r1, -%r3 .b2, %r2, -%r4;",
    "mov.u32 %r1, %tid .x .y;", "mov.u32 %r1, %tid .x+4;",
    ".extern .shared .b8 ext[];", ".visible .global .b32 vg;", ".weak .align 4 .shared .b32 x;",
    ".common .global .b32 cg;", ".common .func fa();", ".extern .b32 x;", ".extern .entry k2();",
    ".entry k2();", ".weak .func fb();", ".global .attribute(.managed) .u32 m;",
    ".reg .attribute(.managed) .u32 o;",
    # C preprocessor line markers (ptxas skips them; numbered here so that its lines stay the file's),
    # and a vertical tab, which is no blank
    '# 12 "k.cu"\nmov.u32 %r1 1;', '#line 12 "k.cu"\nmov.u32 %r1, 1;', '# 12 "k.cu" 1 3 4\n\tmov.u32 %r1, 1;',
    'mov.u32 %r1, 1; # 12 "k.cu"\nmov.u32 %r1 1;', 'mov.u32 %r1, #\t12 "k.cu"\n1;', "# 1", '#line 1',
    '# 1 "k.cu" x', '# 1 "k.cu" // c', '# 0x1 "k.cu"', '# "k.cu"', "#define X 1", '## 1 "k.cu"',
    "mov.u32 %r1,\v1;", "mov.u32 %r1,\f1;",
    "ld.global.u32 %r1, [_];", "ld.global.u32 %r1, [_+4];", "call.uni (%r1), f, (%r2, %tid.x);",
    "call.uni (%r1), f, (%r2 .x);", "call.uni (%r1), f, (_);", "mov.b64 %rd1, {sym+4, %r1};",
    "mov.b64 %rd1, {%r1, %r2+4};", "mov.b64 %rd1, {%r1, 1+1};", "mov.b64 %rd1, {%r1, %tid.x};",
    ".reg .b32;", ".reg .pred ;", ".reg .b32 a, ;", ".local .v8 .f32 x;", ".reg .v8 .b32 x;",
    ".shared .v4 .b16 x;", ".shared .b8 a[-1];", ".shared .b8 a[2][];", ".shared .b8 a[][2];",
    ".shared .b8 a[0x10];", ".shared .b8 a[(16)];", ".shared .b8 a[16U];", ".reg .b32 a<-1>;",
    # prototypes and branch/call target lists: after a label, with their own grammar
    ".callprototype _ ();", "p: .callprototype _ ()\nret;",
    "p: .callprototype (.param .b32 _) f (.param .b32 _);",
    "p: .callprototype _ () .noreturn;", "p: .callprototype _ () .abi_preserve 4;", "p: .callprototype _ ;",
    "p: .callprototype _ () .noreturn .noreturn;", "p: .callprototype _ ();;", "p: .callprototype () _ ();",
    "p: .callprototype _ (.param .b32 _) (.param .b32 _);", "p: .callprototype (.param .b32 _) _ ;",
    "p: .callprototype (.param .b32 _, .param .b32 _) _ (.param .b32 a, .reg .b32 _);",
    "p: .callprototype _ (.param .u64 .ptr .global .align 8 _, .param .align 8 .b8 _[16]);",
    "p: // c\n.callprototype _ () // c\n;", "t: .branchtargets L9 L9;\nL9: ret;", "t: .branchtargets 1;",
    "t: .branchtargets _;", "t: .branchtargets L9,;\nL9: ret;", "t: .branchtargets L9+4;\nL9: ret;",
    ".branchtargets L9;\nL9: ret;", "t: .branchtargets L9, k;\nL9: ret;", "t: .calltargets;",
    "t: .calltargets (f);", "t: .calltargets f, %rd1;",
    ".reg .bf16 x;", ".reg .u128 x;", ".local .s128 x;", ".reg .e5m2x2 x;",
    # array elements as operands (PTX ISA 6.4.3), constant expressions in a call's list
    "ld.shared.u32 %r1, sym[1];", "mov.u32 %r1, sym [%r2+4];", "st.shared.u32 sym[-1], %r1;",
    "ld.shared.u32 %r1, %r2[1+1];", "ld.shared.u32 %r1, sym[1][2];", "ld.shared.u32 %r1, sym[];",
    "mov.u32 %r1, sym[1]+4;", "mov.u32 %r1, sym+4[1];", "mov.u32 %r1, {sym[1]};",
    "ld.shared.u32 %r1, [sym[1]];",
    "ld.shared.u32 %r1, sym[%r2+%r3];", "ld.shared.u32 %r1, sym[_];", "ld.shared.u32 %r1, _[1];",
    "ld.shared.u32 %r1, %tid.x[1];", "ld.shared.u32 %r1, sym[1.5];", "setp.eq.u32 %p1|%p2[1], %r1, %r2;",
    "call.uni f, ((1));", "call.uni f, (1+2, ~1, !1, - 1, 1.5);", "call.uni f, (%r1, (%r1));",
    "call.uni (%r1, (%r2)), f;", "call.uni f, (0f3F800000);", "call.uni f, (-0f3F800000);",
    "call.uni (%r1,\nf,\n(\n%r2\n);",
    # casts in constant expressions (PTX ISA 4.6.1)
    "mov.u64 %rd1, (.s64)1;", "mov.u64 %rd1, (.u64)-1 + 2;", "mov.u64 %rd1, ((.s64)1) << 40;",
    "mov.u64 %rd1, (.s64)(.u64)1;", "ld.global.u32 %r1, [%rd1+(.s64)4];", "mov.u64 %rd1, -(.s64)1;",
    "mov.u64 %rd1, 1 ? (.u64)2 : 3;", "mov.u64 %rd1, (.s64);", "mov.u64 %rd1, (.s64 1);",
    "mov.f32 %f1, (.s64)1.5;", "mov.u64 %rd1, (.f32)1;", "mov.u64 %rd1, (.pred)1;", "mov.u64 %rd1, (.bf16)1;",
    "mov.u64 %rd1, (.u128)1;", "mov.u64 %rd1, (.v2)1;", "mov.u64 %rd1, (.shared)1;",
    "mov.u64 %rd1, (.texref)1;",
    # WARP_SZ, the predefined constant 32, wherever a number may stand
    "add.u32 %r1, %r1, WARP_SZ*2;", "add.u32 %r1, %r1, (WARP_SZ);", "add.u32 %r1, %r1, -WARP_SZ;",
    ".reg .b32 %q<WARP_SZ>;", ".shared .b8 b[WARP_SZ*2];", ".shared .b8 b[2][WARP_SZ];",
    "ld.shared.u32 %r1, [sym+WARP_SZ];", "ld.shared.u32 %r1, [WARP_SZ];", "ld.shared.u32 %r1, sym[WARP_SZ];",
    ".shared .align WARP_SZ .b8 c[4];", "call.uni f, (WARP_SZ);", "mov.u32 %r1, {WARP_SZ};",
    "mov.u32 %r1, %WARP_SZ;", "mov.u32 %r1, WARP_SZX;", ".reg .b32 WARP_SZ;", "WARP_SZ: ret;",
    "@WARP_SZ bra k;", "mov.u32 %r1, WARP_SZ;", "ld.shared.u32 %r1, [WARP_SZ+4];",
    "@%p1 _ ;", "@%p1 .x bra k;", "@%p1 @%p1 bra k;", "@%p1 L9: bra k;", "@%p1|%p2 bra k;", "@1 bra k;",
]

# Whole modules (no HEAD/TAIL).
MODULES = [
    ".version 8.0\n.target sm_90, sm_80\n.address_size 64\n",
    ".version 8.0\n.target sm_90\n.address_size 64\n.global .u32 g = 5;\n.const .b8 t[3] = {1, 2, 3};\n",
    ".version 8.0\n.target sm_90\n.address_size 64\n.global .u32 g[2] = {1, {2}};\n",
    ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(\n.param .u64 a,\n.param .u32 b\n)\n"
    ".maxntid 128, 1, 1\n.minnctapersm 2\n{\nret;\n}\n",
    ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() {\nret;\n",
    ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() {\n/* never closed\nret;\n}\n",
    ".version 8.0\n.target sm_90\n.address_size 64\n.func (.param .b32 r) f(.param .b32 a)\n{\n"
    ".reg .b32 %r<2>;\nld.param.b32 %r1, [a];\nst.param.b32 [r], %r1;\nret;\n}\n",
    ".version 8.0\n.target sm_90\n.address_size 64\n.entry (.param .b32 r) k()\n{\nret;\n}\n",
    ".version 8.0\n.target sm_90\n.address_size 64\nmov.u32 %r1, 1;\n",
    ".version 8.0\n.target sm_90\n.address_size 64\n.extern .shared .align 16 .b8 smem[];\n",
    ".version 8.0\n.target sm_90\n.address_size 64\n.global .align 8 .u64 p[1] = {generic(g)};\n"
    ".global .u32 g;\n",
    ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n.explicitcluster\n"
    ".reqnctapercluster 2, 1, 1\n.maxclusterrank 8\n{\nret;\n}\n",
    ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n.reg .b32 %r<3>;\n"
    "call.uni (%r1), f, (%r2);\nret;\n}\n.func (.reg .b32 x) f(.reg .b32 y)\n{\nmov.b32 x, y;\nret;\n}\n",
    ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n.reg .b64 %rd<2>;\n"
    "proto: .callprototype (.param .b32 _) _ (.param .b32 _);\n"
    "{\n.param .b32 p0;\n.param .b32 r0;\ncall (r0), %rd1, (p0), proto;\n}\nret;\n}\n",
    ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\nret;\n}\n}\n",
    ".version 9.0\n.target sm_100a\n.address_size 64\n",
    ".version 9\n.target sm_90\n",
    ".version 8.0\n.target sm_90\n.version 8.0\n",
    ".version 8.0\n.target sm_90\n.target sm_80\n",
    ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\nmov.u32 %r1, 1/* x */;\n"
    "ret;\n}\n",
    ".version 8.0\n.target sm_90\n.address_size 64\n.loc 1 2 3\n",
    ".version 8.0\n.target sm_90\n.address_size 64\n.pragma \"nounroll\";\n.align 8 .global .b8 x[8];\n",
    ".version 8.0\n.target sm_90\n.address_size 64\n.b8 x;\n",
    "// c\n.target sm_90\n.address_size 64\n.version 8.0\n",
    "// c\n\tadd.s32 %r1, %r2, %r3;\n.version 8.0\n.target sm_90\n",
    ".version 8.0\n.target sm_90\n.address_size 64\n.global .b8 x[2];\n.section .debug_str\n{\n$L0:\n"
    ".b8 1,2\n.b32 x+4\n.b32 .debug_str+1\n.b16 -1\nL1:\n.b8 1 .b8 2\n.b64 $L0\n}\n",
    ".version 8.0\n.target sm_90\n.address_size 64\n.section .debug_str\n{\n.b64 x+y\n}\n",
    ".version 8.0\n.target sm_90\n.address_size 64\n.section .debug_str\n{\n.b8 1,\n}\n",
    ".version 8.0\n.target sm_90\n.address_size 64\n.section .debug_str\n{\n.b8 (1)\n}\n",
    ".version 8.0\n.target sm_90\n.address_size 64\n.section .debug_str\n{\n.b32 x-4\n}\n",
    ".version 8.0\n.target sm_90\n.address_size 64\n.section .debug_str\n{\nb8 5\n}\n",
    ".version 8.0\n.target sm_90\n.address_size 64\n.section .debug_str\n{\n.b8 \"s\"\n}\n",
    ".version 8.0\n.target sm_90\n.address_size 64\n.section .debug_str\n{\n.b8 1\n,.b8 2\n}\n",
    ".version 8.0\n.target sm_90\n.address_size 64\n.func _%r1(.param .b32 a)\n{\nret;\n}\n",
    ".version 8.0\n.target sm_90\n.address_size 64\n.extern .func f\n.global .u32 x;\n",
    ".version 8.0\n.target sm_90\n.address_size 64\n.entry j()\n.global .u32 x;\n",
    ".version 8.0\n.target sm_90\n.address_size 64\n.func j()\n.reg .b32 x;\n",
    ".version 8.0\n.target sm_90\n.address_size 64\n.sreg .b32 s;\n",
    "\ufeff.version 8.0\n.target sm_90\n.address_size 64\n",  # a UTF-8 byte order mark: refused
    '# 1 "k.ptx"\n.version 8.0\n.target sm_90\n.address_size 64\n',
    '#line 1 "k.ptx"\n.version 8.0\n.target sm_90\n.address_size 64\n',
    *(f".version 9.0\n.target sm_100a\n.address_size 64\n{kind} k()\n{attr}\n{{ ret; }}\n"
      for kind in (".visible .entry", ".func") for attr in (
          ".noreturn", ".abi_preserve 4", ".abi_preserve_control 4", ".blocksareclusters\n.reqntid 32\n"
          ".reqnctapercluster 2", ".maxnctapersm 2", ".maxnreg 32", '.pragma "nounroll";', ".foo",
          ".maxntid 32", ".explicitcluster")),
    ".version 8.0\n.target sm_90\n.address_size 64\n.extern .func (.param .b32 r) f\n.param .b64 a,\n"
    ".param .b64 b\n)\n",
    # initializers (PTX ISA 5.4.4) and variable attributes (5.4.8) as nvcc writes them, and around them
    *(".version 8.0\n.target sm_90\n.address_size 64\n.global .u32 g[4];\n" + d for d in (
        ".global .u64 p = generic(g)+8;\n", ".global .u64 p[3] = {generic(g)+8, generic(g), g+4};\n",
        ".global .u64 p = generic (g) + (8*2);\n", ".global .u64 p = generic(g)+-1;\n",
        ".global .u64 p = generic(g)+1.5;\n", ".global .u64 p = g+1.5;\n", ".global .u64 p = generic(g)-8;\n",
        ".global .u64 p = generic(g+8);\n", ".global .u64 p = generic(g)*2;\n", ".global .u64 p = -g;\n",
        ".global .u64 p = 1 + generic(g);\n", ".global .u64 p = generic(g)+g;\n", ".global .u64 p = [g];\n",
        ".global .u64 p = g|g;\n", ".global .u64 p = _;\n", ".global .u64 p = g.x;\n",
        ".global .u64 p = {};\n",
        ".global .u64 p = xyz(g);\n", ".global .u64 p = xyz(0xff);\n", ".global .u64 p = xyz();\n",
        ".global .u64 p = mask(0xff, g);\n", ".global .u64 p = generic;\n", ".global .b8 s[6] = \"hello\";\n",
        ".global .b8 s[6] = {\"hello\"};\n", ".global .u8 p[2] = {0xff(g), 0xff00(generic(g)+4)};\n",
        ".global .u8 p = 255(5);\n", ".global .u8 p = 0xff(1+2);\n", ".global .u8 p = 0xff(1.5);\n",
        ".global .u8 p = 0xff(g)+4;\n", ".global .u8 p = 0xff(0xff(g));\n", ".global .u8 p = 0xff(g, 1);\n",
        ".global .u8 p = 0xff();\n", ".global .u8 p = (0xff)(g);\n", ".global .u8 p = -0xff(g);\n",
        ".global .attribute(.managed) .align 4 .u32 m = 5;\n", ".attribute(.managed) .global .u32 m;\n",
        ".global .align 4 .attribute(.managed) .u32 m;\n", ".global .u32 .attribute(.managed) m;\n",
        ".extern .global .attribute(.managed, .managed) .v2 .u32 m;\n",
        ".global .attribute( .managed ) .attribute(.managed) .u32 m;\n", ".global .attribute(.foo) .u32 m;\n",
        ".global .attribute(managed) .u32 m;\n", ".global .attribute .u32 m;\n",
        ".global .attribute(.unified(0x13, 95)) .u32 m;\n", ".global .attribute(.unified) .u32 m;\n",
        ".global .attribute(.unified(1)) .u32 m;\n", ".global .attribute(.unified(1,2,3)) .u32 m;\n",
        ".global .attribute(.unified(-1,2)) .u32 m;\n", ".global .attribute(.managed) m;\n",
        ".visible .entry k(.param .attribute(.managed) .u64 a)\n{\nret;\n}\n",
        # opaque-type fields (PTX ISA 5.3): ptxas reads `name = value` in any initializer
        ".global .samplerref sr = { filter_mode = nearest, addr_mode_0 = clamp_to_edge };\n",
        ".global .texref t = {width = 64, normalized_coords = 1, filter_mode = -1},"
        " t2 = {depth = 0f3F800000};\n",
        ".global .samplerref sr[2] = { { filter_mode = nearest }, {filter_mode = linear} };\n",
        ".global .samplerref sr = filter_mode = nearest;\n", ".global .u64 sr = { %r1 = 1 };\n",
        ".global .samplerref sr = { filter_mode = addr_mode_0 = wrap };\n", ".global .u64 s = {a = {1}};\n",
        ".global .u64 s = { a = generic(g) };\n", ".global .u64 s = { a = g+4 };\n",
        ".global .u64 s = { _ = 1 };\n",
        ".global .u64 s = { a = _ };\n", ".global .u64 s = { a.x = 1 };\n", ".global .u64 s = { (a) = 1 };\n",
        ".global .u64 s = { a = };\n", ".global .u64 s = { a == 1 };\n", ".global .u64 s = { a = 1, };\n",
        ".func f() .noreturn .abi_preserve 4 .noreturn { ret; }\n",
        ".func f()\n.noreturn\n.noreturn\n{ ret; }\n",
        ".func f() .abi_preserve 4 .abi_preserve 4 { ret; }\n",
        ".entry k() .maxntid 32 .maxntid 32 { ret; }\n",
        ".global .b32;\n", ".global .align 8 .b32 ;\n", ".extern .global .b32 a[][];\n",
        ".func f(.param .v8 .b32 a) { ret; }\n", ".func f(.param .v4 .b32 a) { ret; }\n",
        ".func f(.param .b32 a[-1]) { ret; }\n", ".func f(.param .b32 a[2][3]) { ret; }\n",
        ".func f(.param .b32 a[]) { ret; }\n", ".func f(.reg .b32 a[2]) { ret; }\n",
        ".callprototype _ ();\n", ".branchtargets a;\n", ".calltargets a;\n", "p: .callprototype _ ();\n",
        # attributes take so many integers; .target and .address_size only in the header
        ".entry k() .explicitcluster 2 { ret; }\n", ".entry k() .maxnreg 1, 2 { ret; }\n",
        ".func f() .noreturn 1 { ret; }\n", ".entry k() .minnctapersm { ret; }\n",
        ".entry k() .reqntid 1,2,3,4 { ret; }\n", ".entry k() .reqnctapercluster 1,2,3 { ret; }\n",
        ".entry k() .reqnctapercluster { ret; }\n", ".func f() .abi_preserve 1, 2 { ret; }\n",
        ".entry k() .blocksareclusters 1 { ret; }\n", ".entry k() .maxntid -1 { ret; }\n",
        ".entry k() .maxntid 32,\n{ ret; }\n", ".entry k() .maxntid 32, 1, 1, 1 { ret; }\n",
        ".target sm_90\n", ".address_size 64\n", ".func f();\n.target sm_90\n",
        # types a variable cannot have; .section data of any other type; section names and labels
        *(f".global {t} x;\n.section .debug_str {{ {t} 1 }}\n" for t in (
            ".bf16", ".bf16x2", ".tf32", ".s128", ".u128", ".f32", ".pred", ".b128", ".e4m3", ".f16x2")),
        *(f".section .debug_str {{ {d} }}\n" for d in (
            ".f32 1.0", ".b32 .debug_info-L1", ".b32 .debug_info+4", ".b64 _", ".b32 L1-_",
            ".b32 L1-.debug_info", ".b32 L1-L2", ".b64 %r1")),
        ".section foo { }\n", ".func f(.param .tf32 a) { ret; }\n",
        ".func f(.param .b32 .b32 a) { ret; }\n", ".global .u64 x = (.u64)1;\n",
        ".global .u64 x = g+(.u64)4;\n",
        ".section .debug_str { .b8 .section }\n", ".section .debug_str { .b8 1, .reg }\n",
        '@@DWARF .section .debug_info, "", @progbits\n', "@@DWARF\n.visible .entry k() { ret; }\n",
        "@ @DWARF .byte 1\n", "@@dwarf .byte 1\n", ".visible .entry k() { ret; } @@DWARF .byte 1\n", "@",
        "@@", "@@DWARF", ".global .u32 x = WARP_SZ + 1;\n", ".global .u32 x[WARP_SZ];\n",
        ".entry k() .maxntid WARP_SZ { ret; }\n", ".func f(.param .b32 a[WARP_SZ]) { ret; }\n")),
    ".version 8.0\n.target sm_90\n.target sm_90\n.address_size 64\n.address_size 64\n",
    ".version 8.0\n.target sm_90\n.global .b32 x;\n.address_size 64\n",
    '.version 8.0\n.target sm_90\n.file 1 "x.cu"\n.target sm_90\n',
    '.version 8.0\n.target sm_90\n.pragma "nounroll";\n.address_size 64\n',
]

# ptxas's fatal parse-level messages: the token a syntax error is near, or the whole message.
_NON_ASCII = re.compile(r"fatal\s*: Unexpected non-ASCII character encountered on line (\d+)")
_FATAL = re.compile(r"line (\d+); fatal\s*: (?:Parsing error near '(.*)': syntax error|(.*))")


# Fatal errors of ptxas that are about meaning, not form (initializer types, undeclared symbols): the
# validator reports those, the parser must accept the text.
_SEMANTIC = ("Initial value type mismatch", "Invalid initial value expression",
             "Invalid initial value symbol", "Label expected for forward reference")
# Errors ptxas goes on after but the tree cannot hold (an address offset that is not an integer): the
# parser stops there, with ptxas's words.
_UNREPRESENTABLE = re.compile(r"line (\d+); error\s*: (Integer constant expression expected)")


def ptxas_verdict(path: Path) -> tuple[int, str] | None:
    """(line, near-token or message) of ptxas's fatal parse-level error, or None when it has none."""
    out = subprocess.run(["ptxas", "-arch=sm_90a", str(path), "-o", "/dev/null"],
                         capture_output=True, text=True, timeout=60)
    a = _NON_ASCII.search(out.stderr)
    if a is not None:  # (ptxas names no line before its message there)
        return int(a.group(1)), a.group(0).split(": ", 1)[1]
    m = _FATAL.search(out.stderr)
    if m is None or (m.group(3) or "").startswith(_SEMANTIC):
        u = _UNREPRESENTABLE.search(out.stderr)
        return (int(u.group(1)), u.group(2)) if u else None
    return int(m.group(1)), m.group(2) if m.group(2) is not None else m.group(3).replace(str(path), "F")


def our_verdict(text: str) -> tuple[int, str] | None:
    try:
        parse(text, "F")
    except PtxSyntaxError as e:
        d = e.diagnostics[-1]
        assert d.severity == "fatal" and d.rule == "syntax"
        assert 1 <= d.line <= text.count("\n") + 1 and d.column >= 1
        m = re.match(r"Parsing error near '(.*)': syntax error", d.message)
        # our messages add what was expected, in parentheses, after ptxas's words
        return d.line, m.group(1) if m else d.message.split(" (")[0]
    return None


CASES = [HEAD + b + TAIL for b in BODY] + MODULES


@pytest.fixture(scope="module")
def ptxas_verdicts(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[int, str] | None]:
    d = tmp_path_factory.mktemp("ptxas")
    out = []
    for n, text in enumerate(CASES):
        f = d / f"c{n}.ptx"
        f.write_text(text)
        out.append(ptxas_verdict(f))
    return out


@pytest.mark.tool("ptxas")
@pytest.mark.parametrize("n", range(len(CASES)), ids=lambda n: repr(CASES[n][len(HEAD):len(HEAD) + 40])
                         if n < len(BODY) else f"module{n - len(BODY)}")
def test_agrees_with_ptxas(n: int, ptxas_verdicts: list[tuple[int, str] | None]) -> None:
    text = CASES[n]
    theirs = ptxas_verdicts[n]
    ours = our_verdict(text)
    if theirs is None:
        assert ours is None, f"ptxas parses this, we reject it: {ours}"
    else:
        assert ours is not None, f"ptxas rejects this ({theirs}), we parse it"
        assert ours == theirs


# -- mutated real modules through both ---------------------------------------------------------------

SWEEP_N = int(os.environ.get("PTXAS_SWEEP_N", "40"))
_MODULES = sorted((Path(__file__).parent / "modules").glob("*.ptx"))
_SMALL = [p.read_text() for p in _MODULES if p.stat().st_size < 12000]
_INSERTS = [";", ",", "[", "]", "{", "}", "(", ")", "@", "!", "_", "+", "-", "0x", "1", ".b32",
            ".shared::cta", "%r1", ":", "|", "<", "=", "1.5", "0f3F800000", ".v2", ".align 8", " ", "\n"]


def mutate(rng: random.Random, text: str) -> str:
    """One or two edits below the header: delete, insert or duplicate a character, swap or drop a line."""
    lines = text.split("\n")
    for _ in range(rng.randint(1, 2)):
        n = rng.randrange(12, len(lines))
        line = lines[n]
        k = rng.randrange(max(1, len(line)))
        op = rng.choice(["del", "ins", "dup", "swap", "drop"])
        if op == "del" and line:
            lines[n] = line[:k] + line[k + 1:]
        elif op == "ins":
            lines[n] = line[:k] + rng.choice(_INSERTS) + line[k:]
        elif op == "dup" and line:
            lines[n] = line[:k] + line[k] + line[k:]
        elif op == "swap":
            m = rng.randrange(12, len(lines))
            lines[n], lines[m] = lines[m], lines[n]
        elif op == "drop":
            del lines[n]
    return "\n".join(lines)


@pytest.mark.tool("ptxas")
def test_mutated_modules_agree_with_ptxas(tmp_path: Path) -> None:
    """On mutated real modules, ptxas and we agree on stopping or not and on the line. Not on every
    case: ptxas's parser knows each instruction (`mbarrier.arrive_dropx.b64 _, [r]` fails on the sink
    there, we leave unknown opcodes to the validator), so the bar is 90%; the cases that differ are
    printed. PTXAS_SWEEP_N=600 PTXAS_SWEEP_SEED=11 for a longer run (598 of 600 at the time of writing)."""
    rng = random.Random(int(os.environ.get("PTXAS_SWEEP_SEED", "2026")))
    agree, differ = 0, []
    for n in range(SWEEP_N):
        text = mutate(rng, rng.choice(_SMALL))
        f = tmp_path / f"m{n}.ptx"
        f.write_text(text)
        theirs, ours = ptxas_verdict(f), our_verdict(text)
        same = (theirs is None) == (ours is None) and (theirs is None or ours is None or theirs[0] == ours[0])
        agree += same
        if not same:
            differ.append((theirs, ours))
    print(f"{agree} of {SWEEP_N} mutated modules agree; differing (ptxas, ours): {differ}")
    assert agree >= 0.9 * SWEEP_N, differ
