/**
 * The line tokenizers on lines as llvmlite, ptxas/nvdisasm and users write
 * them (node:test; run with `jlpm test`).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  llvmTokenizer,
  ptxTokenizer,
  pythonTokenizer,
  sassTokenizer,
  tokenizeText,
  LineTokenizer
} from '../src/languages';

/** [text, kind] pairs of every token of every line of `text`. */
function kinds(lang: LineTokenizer<unknown>, text: string): [string, string][] {
  const { lines, tokens } = tokenizeText(lang, text);
  return tokens.flatMap((line, i) => line.map(t => [lines[i].slice(t.from, t.to), t.kind] as [string, string]));
}

const ptx = ptxTokenizer as LineTokenizer<unknown>;
const llvm = llvmTokenizer as LineTokenizer<unknown>;
const sass = sassTokenizer as LineTokenizer<unknown>;
const python = pythonTokenizer as LineTokenizer<unknown>;

test('PTX: guarded branch, label reference', () => {
  assert.deepEqual(kinds(ptx, '\t@%p1 bra \t$L__BB0_2;'), [
    ['@%p1', 'atom'],
    ['bra', 'keyword'],
    ['$L__BB0_2', 'variable-2'],
    [';', 'punctuation']
  ]);
});

test('PTX: an instruction with modifiers is one opcode token', () => {
  assert.deepEqual(kinds(ptx, '\tld.global.nc.f32 \t%f1, [%rd4+4];'), [
    ['ld.global.nc.f32', 'keyword'],
    ['%f1', 'variable'],
    [',', 'punctuation'],
    ['[', 'punctuation'],
    ['%rd4', 'variable'],
    ['+', 'punctuation'],
    ['4', 'number'],
    [']', 'punctuation'],
    [';', 'punctuation']
  ]);
});

test('PTX: directives, types, special registers, label definitions', () => {
  assert.deepEqual(kinds(ptx, '\t.reg .b32 \t%r<5>;').slice(0, 3), [
    ['.reg', 'meta'],
    ['.b32', 'type'],
    ['%r', 'variable']
  ]);
  assert.deepEqual(kinds(ptx, '\tmov.u32 \t%r3, %tid.x;').slice(0, 2), [
    ['mov.u32', 'keyword'],
    ['%r3', 'variable']
  ]);
  assert.deepEqual(kinds(ptx, '\tmov.u32 \t%r3, %tid.x;')[3], ['%tid.x', 'variable']);
  assert.deepEqual(kinds(ptx, '$L__BB0_2:'), [['$L__BB0_2:', 'def']]);
});

test('PTX: a block comment carries over to the next line; hex float literals', () => {
  const tokens = kinds(ptx, 'mov.f32 %f1, 0f3F800000; /* one\nstill */ add.f32 %f2, %f1, %f1;');
  assert.deepEqual(tokens.slice(0, 5), [
    ['mov.f32', 'keyword'],
    ['%f1', 'variable'],
    [',', 'punctuation'],
    ['0f3F800000', 'number'],
    [';', 'punctuation']
  ]);
  assert.deepEqual(tokens[5], ['/* one', 'comment']);
  assert.deepEqual(tokens[6], ['still */', 'comment']);
  assert.deepEqual(tokens[7], ['add.f32', 'keyword']);
});

test('LLVM IR: values, instructions, types, metadata', () => {
  const line = '  %5 = getelementptr inbounds float, ptr addrspace(1) %0, i64 %4, !dbg !12';
  const tokens = kinds(llvm, line).filter(([, k]) => k !== 'punctuation');
  assert.deepEqual(tokens, [
    ['%5', 'variable'],
    ['getelementptr', 'keyword'],
    ['inbounds', 'builtin'],
    ['float', 'type'],
    ['ptr', 'type'],
    ['addrspace', 'builtin'],
    ['1', 'number'],
    ['%0', 'variable'],
    ['i64', 'type'],
    ['%4', 'variable'],
    ['!dbg', 'meta'],
    ['!12', 'meta']
  ]);
  assert.deepEqual(
    kinds(llvm, 'define ptx_kernel void @saxpy(float %a) #0 {').filter(([, k]) => k !== 'punctuation'),
    [
      ['define', 'keyword'],
      ['ptx_kernel', 'builtin'],
      ['void', 'type'],
      ['@saxpy', 'def'],
      ['float', 'type'],
      ['%a', 'variable'],
      ['#0', 'meta']
    ]
  );
  assert.deepEqual(kinds(llvm, 'entry:  ; preds = %0'), [
    ['entry:', 'def'],
    ['; preds = %0', 'comment']
  ]);
});

test('SASS: address comment, guard, opcode, registers, constant bank', () => {
  assert.deepEqual(kinds(sass, '        /*0070*/               @P0 EXIT ;'), [
    ['/*0070*/', 'comment'],
    ['@P0', 'atom'],
    ['EXIT', 'keyword'],
    [';', 'punctuation']
  ]);
  const isetp = kinds(sass, '        /*0060*/                   ISETP.GE.AND P0, PT, R7, UR4, PT ;');
  assert.deepEqual(isetp[1], ['ISETP.GE.AND', 'keyword']);
  assert.deepEqual(
    isetp.filter(([, k]) => k === 'variable').map(([t]) => t),
    ['P0', 'PT', 'R7', 'UR4', 'PT']
  );
  const ldc = kinds(sass, '        /*0000*/                   LDC R1, c[0x0][0x28] ;');
  assert.deepEqual(ldc.slice(1, 5), [
    ['LDC', 'keyword'],
    ['R1', 'variable'],
    [',', 'punctuation'],
    ['c[0x0]', 'builtin']
  ]);
  // sm_90 code addressing shared memory reads SR_CgaCtaId: one register, lower case too
  const s2r = kinds(sass, '        /*00d0*/                   S2R R5, SR_CgaCtaId ;');
  assert.deepEqual(
    s2r.filter(([, k]) => k === 'variable').map(([t]) => t),
    ['R5', 'SR_CgaCtaId']
  );
  assert.deepEqual(kinds(sass, '.L_x_0:'), [['.L_x_0:', 'def']]);
  assert.deepEqual(kinds(sass, '\t//## File "/tmp/saxpy.py", line 5'), [
    ['//## File "/tmp/saxpy.py", line 5', 'comment']
  ]);
});

test('SASS: a mixed-case special register (sm_90 SR_CgaCtaId) is one register', () => {
  const s2ur = kinds(sass, '        /*00b0*/                   S2UR UR5, SR_CgaCtaId ;');
  assert.deepEqual(
    s2ur.filter(([, k]) => k === 'variable').map(([t]) => t),
    ['UR5', 'SR_CgaCtaId']
  );
});

test('Python: def names, comments with markup, triple-quoted strings over lines', () => {
  assert.deepEqual(kinds(python, 'def saxpy(a):  # <b>x</b>').filter(([, k]) => k !== 'punctuation'), [
    ['def', 'keyword'],
    ['saxpy', 'def'],
    ['a', 'variable'],
    ['# <b>x</b>', 'comment']
  ]);
  const tokens = kinds(python, 'x = """doc\nstill""" + 1');
  assert.deepEqual(tokens, [
    ['x', 'variable'],
    ['=', 'punctuation'],
    ['"""doc', 'string'],
    ['still"""', 'string'],
    ['+', 'punctuation'],
    ['1', 'number']
  ]);
});

test('tokenizeText: one token list per line, CR of CRLF ignored', () => {
  const { lines, tokens } = tokenizeText(ptx, 'ret;\r\n\nexit;');
  assert.equal(lines.length, 3);
  assert.equal(tokens.length, 3);
  assert.deepEqual(tokens[0], [
    { from: 0, to: 3, kind: 'keyword' },
    { from: 3, to: 4, kind: 'punctuation' }
  ]);
  assert.deepEqual(tokens[1], []);
});
