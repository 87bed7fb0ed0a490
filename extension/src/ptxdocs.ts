/**
 * Short descriptions of PTX instructions and their modifiers, written for
 * warp_lab, with the PTX ISA section each one is specified in (section
 * names as in NVIDIA's "Parallel Thread Execution ISA", chapter 9
 * "Instruction Set").
 */
import { splitInstruction } from './languages';

const INT = 'Integer Arithmetic Instructions';
const FLOAT = 'Floating-Point Instructions';
const CMP = 'Comparison and Selection Instructions';
const LOGIC = 'Logic and Shift Instructions';
const MOVE = 'Data Movement and Conversion Instructions';
const CONTROL = 'Control Flow Instructions';
const SYNC = 'Parallel Synchronization and Communication Instructions';
const MISC = 'Miscellaneous Instructions';

/** What the tooltip shows for one opcode. */
interface OpcodeDoc {
  /** One or two sentences on what the instruction does. */
  summary: string;
  /** Section for integer/bit types. */
  section: string;
  /** Section when a floating-point type modifier is present, if different. */
  floatSection?: string;
  /** Modifier meanings specific to this opcode (override the common table). */
  modifiers?: Record<string, string>;
}

const OPCODES: Record<string, OpcodeDoc> = {
  ld: { summary: 'Load a value from memory in the given state space into a register.', section: MOVE },
  ldu: { summary: 'Load a value that is the same for every thread of the warp (read-only, global).', section: MOVE },
  st: { summary: 'Store a register value to memory in the given state space.', section: MOVE },
  mov: { summary: 'Copy a register, immediate, special register or address into a register.', section: MOVE },
  cvt: { summary: 'Convert a value from one type to another (widen, narrow, int↔float), with optional rounding and saturation.', section: MOVE },
  cvta: { summary: 'Convert an address between a specific state space (global, shared, local, const) and the generic address space.', section: MOVE },
  prmt: { summary: 'Pick bytes from two 32-bit registers into a new 32-bit value.', section: MOVE },
  shfl: { summary: 'Exchange a register between lanes of a warp without going through memory.', section: MOVE,
    modifiers: { up: 'read from the lane `delta` below', down: 'read from the lane `delta` above', bfly: 'read from lane (laneid XOR mask): butterfly', idx: 'read from an explicit source lane' } },
  prefetch: { summary: 'Hint that a cache line will soon be used.', section: MOVE },
  add: { summary: 'Add two values.', section: INT, floatSection: FLOAT },
  sub: { summary: 'Subtract the second value from the first.', section: INT, floatSection: FLOAT },
  mul: { summary: 'Multiply two values; for integers choose which half of the double-width product to keep.', section: INT, floatSection: FLOAT },
  mad: { summary: 'Multiply two values and add a third (a*b + c).', section: INT, floatSection: FLOAT },
  fma: { summary: 'Fused multiply-add: a*b + c computed with a single rounding.', section: FLOAT },
  div: { summary: 'Divide the first value by the second.', section: INT, floatSection: FLOAT },
  rem: { summary: 'Remainder of integer division (sign follows the dividend).', section: INT },
  abs: { summary: 'Absolute value.', section: INT, floatSection: FLOAT },
  neg: { summary: 'Negate a value.', section: INT, floatSection: FLOAT },
  min: { summary: 'The smaller of two values.', section: INT, floatSection: FLOAT },
  max: { summary: 'The larger of two values.', section: INT, floatSection: FLOAT },
  popc: { summary: 'Count the set bits.', section: INT },
  clz: { summary: 'Count leading zero bits.', section: INT },
  brev: { summary: 'Reverse the order of the bits.', section: INT },
  bfe: { summary: 'Extract a bit field.', section: INT },
  bfi: { summary: 'Insert a bit field.', section: INT },
  rcp: { summary: 'Reciprocal 1/x.', section: FLOAT },
  sqrt: { summary: 'Square root.', section: FLOAT },
  rsqrt: { summary: 'Reciprocal square root 1/sqrt(x), approximate.', section: FLOAT },
  sin: { summary: 'Sine of an angle in radians, approximate (hardware special-function unit).', section: FLOAT },
  cos: { summary: 'Cosine of an angle in radians, approximate (hardware special-function unit).', section: FLOAT },
  lg2: { summary: 'Base-2 logarithm, approximate.', section: FLOAT },
  ex2: { summary: 'Base-2 exponential 2^x, approximate.', section: FLOAT },
  tanh: { summary: 'Hyperbolic tangent, approximate.', section: FLOAT },
  testp: { summary: 'Test a floating-point property (finite, NaN, normal, ...) into a predicate.', section: FLOAT },
  setp: { summary: 'Compare two values and write the result to a predicate register (optionally combined with another predicate).', section: CMP,
    modifiers: { and: 'combine the comparison with a predicate operand by AND', or: 'combine the comparison with a predicate operand by OR', xor: 'combine the comparison with a predicate operand by XOR', lo: 'unsigned lower-than', hi: 'unsigned higher-than' } },
  set: { summary: 'Compare two values and write all ones/1.0 or zero to a register.', section: CMP },
  selp: { summary: 'Select one of two values according to a predicate (a branch-free ?:).', section: CMP },
  slct: { summary: 'Select one of two values according to the sign of a third.', section: CMP },
  and: { summary: 'Bitwise AND (logical AND for predicates).', section: LOGIC },
  or: { summary: 'Bitwise OR (logical OR for predicates).', section: LOGIC },
  xor: { summary: 'Bitwise exclusive OR.', section: LOGIC },
  not: { summary: 'Bitwise NOT (logical NOT for predicates).', section: LOGIC },
  cnot: { summary: 'C-style logical NOT: 1 if the value is zero, else 0.', section: LOGIC },
  lop3: { summary: 'Any three-input bitwise function, chosen by an 8-bit truth table.', section: LOGIC },
  shl: { summary: 'Shift left, filling with zeros.', section: LOGIC },
  shr: { summary: 'Shift right: arithmetic (sign-filling) for signed types, logical for unsigned and bit types.', section: LOGIC },
  shf: { summary: 'Funnel shift: shift the 64-bit concatenation of two registers and keep 32 bits.', section: LOGIC },
  bra: { summary: 'Branch to a label; with a guard predicate, only the lanes where it holds jump (divergence).', section: CONTROL },
  call: { summary: 'Call a function (device function or libdevice routine), passing parameters through .param space.', section: CONTROL },
  ret: { summary: 'Return from the current function.', section: CONTROL },
  exit: { summary: 'End the thread.', section: CONTROL },
  bar: { summary: 'Barrier: wait until the threads of the CTA (block) arrive; bar.sync is __syncthreads().', section: SYNC,
    modifiers: { sync: 'arrive and wait', arrive: 'arrive without waiting', red: 'arrive, wait and reduce a predicate across the block' } },
  barrier: { summary: 'Barrier among the threads of the CTA (block), the newer spelling of bar.', section: SYNC },
  membar: { summary: 'Memory barrier: order this thread\'s memory accesses as seen by others.', section: SYNC },
  fence: { summary: 'Memory fence with explicit ordering semantics and scope.', section: SYNC },
  atom: { summary: 'Atomic read-modify-write on a memory location; returns the old value.', section: SYNC },
  red: { summary: 'Atomic reduction on a memory location, without returning the old value.', section: SYNC },
  vote: { summary: 'Evaluate a predicate across the warp\'s active lanes.', section: SYNC,
    modifiers: { all: 'true if the predicate holds on all active lanes', any: 'true if it holds on any active lane', uni: 'true if it is the same on all active lanes', ballot: 'a 32-bit mask with one bit per lane' } },
  match: { summary: 'Find the lanes of the warp that hold the same value.', section: SYNC },
  activemask: { summary: 'A 32-bit mask of the lanes of the warp that are executing.', section: SYNC },
  redux: { summary: 'Reduce a value across the lanes of a warp.', section: SYNC },
  trap: { summary: 'Abort the kernel with an error.', section: MISC },
  brkpt: { summary: 'Suspend execution for a debugger.', section: MISC },
  nanosleep: { summary: 'Suspend the thread for about the given number of nanoseconds.', section: MISC },
  pmevent: { summary: 'Trigger a performance-monitor event.', section: MISC }
};

const TYPE_NOTES: Record<string, string> = {
  b: 'untyped bits', u: 'unsigned integer', s: 'signed integer', f: 'IEEE floating point', bf: 'bfloat16 floating point'
};

/** Modifiers common to many instructions. */
const MODIFIERS: Record<string, string> = {
  global: 'global memory (device DRAM, cached in L2/L1)',
  shared: 'shared memory of the CTA (block), on-chip',
  local: 'per-thread local memory (spills, stack), in DRAM',
  param: 'kernel or function parameter space',
  const: 'constant memory (cached, read-only)',
  generic: 'generic address, resolved to a state space at run time',
  to: 'convert from generic to the named state space',
  nc: 'non-coherent read-only path (texture cache)',
  volatile: 'no caching or reordering by the compiler',
  relaxed: 'relaxed memory ordering', acquire: 'acquire ordering', release: 'release ordering', acq_rel: 'acquire-release ordering',
  cta: 'scope: the CTA (block)', gpu: 'scope: the whole GPU', sys: 'scope: the system (host and peers)', cluster: 'scope: the cluster',
  ca: 'cache at all levels', cg: 'cache in L2 only', cs: 'streaming, likely accessed once', lu: 'last use', cv: 'do not cache, fetch again',
  wb: 'write back', wt: 'write through',
  v2: 'vector of 2 elements', v4: 'vector of 4 elements', v8: 'vector of 8 elements',
  rn: 'round to nearest even', rz: 'round towards zero', rm: 'round towards minus infinity', rp: 'round towards plus infinity',
  rni: 'round to nearest integer', rzi: 'round towards zero to an integer', rmi: 'round down to an integer', rpi: 'round up to an integer',
  ftz: 'flush subnormal inputs and results to zero', sat: 'saturate (clamp) the result',
  approx: 'fast approximation', full: 'full-range approximation', wide: 'result twice as wide as the inputs',
  lo: 'keep the low half of the product', hi: 'keep the high half of the product', cc: 'write the carry flag',
  uni: 'the branch is uniform: all lanes of the warp take it the same way',
  sync: 'the lanes named by the membermask synchronise first', aligned: 'all threads execute the same instruction',
  eq: 'equal', ne: 'not equal', lt: 'less than', le: 'less or equal', gt: 'greater than', ge: 'greater or equal',
  ls: 'unsigned lower or same', hs: 'unsigned higher or same',
  equ: 'equal or unordered (NaN)', neu: 'not equal or unordered', ltu: 'less than or unordered', leu: 'less or equal or unordered',
  gtu: 'greater than or unordered', geu: 'greater or equal or unordered', num: 'both are numbers', nan: 'either is NaN',
  exch: 'exchange', cas: 'compare and swap', inc: 'increment with wrap-around', dec: 'decrement with wrap-around',
  add: 'operation: add', min: 'operation: minimum', max: 'operation: maximum', and: 'operation: AND', or: 'operation: OR', xor: 'operation: XOR',
  pred: '1-bit predicate'
};

/** One explained modifier, e.g. `{ name: 'f32', text: '32-bit IEEE floating point' }`. */
export interface ModifierDoc {
  name: string;
  text: string;
}

/** Everything the tooltip shows for one PTX instruction token. */
export interface InstructionDoc {
  opcode: string;
  summary: string;
  section: string;
  modifiers: ModifierDoc[];
}

function describeModifier(mod: string, doc: OpcodeDoc | undefined): string {
  const own = doc?.modifiers?.[mod];
  if (own) {
    return own;
  }
  const typed = /^(bf|b|u|s|f)(\d+)(x2)?$/.exec(mod);
  if (typed) {
    const pair = typed[3] ? ', packed pair' : '';
    return `${typed[2]}-bit ${TYPE_NOTES[typed[1]]}${pair}`;
  }
  return MODIFIERS[mod] ?? 'modifier (see the instruction\'s section)';
}

/**
 * Explain a PTX instruction token such as `ld.global.nc.f32`; null when the
 * opcode is not in the table.
 */
export function describeInstruction(token: string): InstructionDoc | null {
  const { opcode, modifiers } = splitInstruction(token);
  const doc = OPCODES[opcode];
  if (!doc) {
    return null;
  }
  const isFloat = modifiers.some(m => /^(f|bf)\d+/.test(m));
  return {
    opcode,
    summary: doc.summary,
    section: `${isFloat && doc.floatSection ? doc.floatSection : doc.section}: ${opcode}`,
    modifiers: modifiers.map(name => ({ name, text: describeModifier(name, doc) }))
  };
}
