/**
 * JSON Schema (as zod's toJSONSchema writes it) -> the schema dialect node-llama-cpp turns into a
 * GBNF grammar. The grammar only steers decoding; the gateway still validates every reply with
 * the zod schema, so this mapping may be looser than the schema but must never be stricter.
 *
 * Where the dialects differ:
 * - node-llama-cpp always emits every listed property, so optional properties are left out
 *   (a shorter reply that zod accepts, instead of a forced field the model must invent);
 * - strings, arrays and open objects get length caps, so a small model that loops still
 *   closes its JSON before max_tokens cuts it off (limitsForBudget() sizes the caps from the
 *   reply's token budget, so the longest reply the grammar allows fits in it);
 * - keywords it lacks (pattern, minimum, allOf, ...) are dropped, or the node becomes "any JSON".
 */

export interface GrammarLimits {
  /** cap on every string's length in characters */
  maxStringLength: number;
  /** cap on every array's items and every open object's keys */
  maxItems: number;
}

export const DEFAULT_GRAMMAR_LIMITS: GrammarLimits = { maxStringLength: 1_000, maxItems: 32 };

/**
 * Characters one generated token is assumed to carry when sizing caps. BPE tokenizers average
 * 3-4 characters per token on English and JSON; a reply made of rarer tokens can still run
 * out, and then it fails as truncated, as it should.
 */
export const CHARS_PER_TOKEN = 3;
/** what a number is assumed to take: the grammar cannot cap its digits */
const NUMBER_CHARS = 16;
/** what a key of an open object is assumed to take (keys are not capped) */
const KEY_CHARS = 32;
/** strings shorter than this hold little of a finding: fewer items are preferred to shorter strings */
const PREFERRED_STRING_LENGTH = 256;
const MIN_STRING_LENGTH = 8;

/**
 * The largest caps (at most `ceiling`) under which the longest reply `schema` allows fits in
 * `maxTokens` tokens: the most items (halving from the ceiling) that still leave strings of
 * PREFERRED_STRING_LENGTH characters, each with the longest strings that fit; else one item
 * with whatever string length fits. No budget: the ceiling.
 */
export function limitsForBudget(schema: unknown, maxTokens: number | undefined, ceiling: GrammarLimits = DEFAULT_GRAMMAR_LIMITS): GrammarLimits {
  if (maxTokens === undefined) return ceiling;
  const budget = maxTokens * CHARS_PER_TOKEN;
  const fits = (limits: GrammarLimits) => longestReply(toGrammarSchema(schema, limits)) <= budget;
  const preferred = Math.min(PREFERRED_STRING_LENGTH, ceiling.maxStringLength);
  for (let items = ceiling.maxItems; ; items = Math.floor(items / 2)) {
    const strings = longestStrings(fits, items, ceiling.maxStringLength);
    if (strings >= preferred || items <= 1) return { maxItems: Math.max(1, items), maxStringLength: strings };
  }
}

/** Binary search for the longest string cap that fits with `items` (the longest reply grows with it). */
function longestStrings(fits: (l: GrammarLimits) => boolean, items: number, max: number): number {
  let lo = Math.min(MIN_STRING_LENGTH, max);
  let hi = max;
  if (fits({ maxItems: items, maxStringLength: hi })) return hi;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (fits({ maxItems: items, maxStringLength: mid })) lo = mid;
    else hi = mid;
  }
  return lo;
}

/**
 * Characters in the longest JSON a grammar schema (toGrammarSchema's output) admits, counting
 * one character of whitespace around each value. A recursive definition counts once: its
 * reference is a leaf.
 */
export function longestReply(schema: Json): number {
  const defs = isObject(schema.$defs) ? schema.$defs : {};
  const seen = new Set<string>();
  const size = (node: unknown): number => {
    if (!isObject(node)) return 0;
    if (typeof node.$ref === 'string') {
      const name = node.$ref.replace(/^#\/\$defs\//, '');
      if (seen.has(name)) return 0;
      seen.add(name);
      const n = size(defs[name]);
      seen.delete(name);
      return n;
    }
    if ('const' in node) return JSON.stringify(node.const ?? null).length;
    if (Array.isArray(node.enum)) return Math.max(0, ...node.enum.map((v) => JSON.stringify(v ?? null).length));
    if (Array.isArray(node.oneOf)) return Math.max(0, ...node.oneOf.map(size));
    const type = Array.isArray(node.type) ? node.type : [node.type];
    return Math.max(0, ...type.map((t) => sizeOfType(node, t, size)));
  };
  return size(schema);
}

function sizeOfType(node: Json, type: unknown, size: (n: unknown) => number): number {
  const ws = 2;
  switch (type) {
    case 'string':
      return typeof node.format === 'string' ? 32 : numberOr(node.maxLength, DEFAULT_GRAMMAR_LIMITS.maxStringLength) + 2;
    case 'number':
    case 'integer':
      return NUMBER_CHARS;
    case 'boolean':
      return 5;
    case 'null':
      return 4;
    case 'array': {
      const prefix = Array.isArray(node.prefixItems) ? node.prefixItems.map(size) : [];
      const rest = Math.max(0, numberOr(node.maxItems, 0) - prefix.length);
      const item = node.items === undefined ? NUMBER_CHARS : size(node.items);
      return 2 + prefix.reduce((a, n) => a + n + ws, 0) + rest * (item + ws);
    }
    case 'object': {
      const props = isObject(node.properties) ? node.properties : {};
      let n = 2 + Object.entries(props).reduce((a, [k, v]) => a + JSON.stringify(k).length + 1 + size(v) + ws, 0);
      // Open objects: each extra key is a capped string with a (capped) value.
      const extra = numberOr(node.maxProperties, 0) - Object.keys(props).length;
      if (extra > 0) n += extra * (KEY_CHARS + 3 + (isObject(node.additionalProperties) ? size(node.additionalProperties) : NUMBER_CHARS) + ws);
      return n;
    }
    default:
      return NUMBER_CHARS;
  }
}

type Json = Record<string, unknown>;
const PRIMITIVES = new Set(['string', 'number', 'integer', 'boolean', 'null']);
const STRING_FORMATS = new Set(['date-time', 'time', 'date']);
const ROOT_DEF = '__root';

export function toGrammarSchema(schema: unknown, limits: GrammarLimits = DEFAULT_GRAMMAR_LIMITS): Json {
  if (!isObject(schema)) return anyValue(limits);
  const defs = isObject(schema.$defs) ? schema.$defs : isObject(schema.definitions) ? schema.definitions : {};
  const ctx: Ctx = { limits, rootReferenced: false };
  const out: Json = convert(schema, ctx);
  const convertedDefs: Json = {};
  for (const [name, def] of Object.entries(defs)) convertedDefs[name] = convert(def, ctx);
  // A self-reference ("#") becomes a named definition, the only kind of $ref node-llama-cpp reads.
  if (ctx.rootReferenced) {
    convertedDefs[ROOT_DEF] = out;
    return { $ref: `#/$defs/${ROOT_DEF}`, $defs: convertedDefs };
  }
  return Object.keys(convertedDefs).length ? { ...out, $defs: convertedDefs } : out;
}

interface Ctx {
  limits: GrammarLimits;
  rootReferenced: boolean;
}

function convert(node: unknown, ctx: Ctx): Json {
  if (node === true || !isObject(node)) return anyValue(ctx.limits);
  if (typeof node.$ref === 'string') return ref(node.$ref, ctx);
  if ('const' in node) return { const: node.const };
  if (Array.isArray(node.enum)) return { enum: node.enum };
  const alternatives = Array.isArray(node.anyOf) ? node.anyOf : Array.isArray(node.oneOf) ? node.oneOf : null;
  if (alternatives) return alternatives.length === 1 ? convert(alternatives[0], ctx) : { oneOf: alternatives.map((a) => convert(a, ctx)) };
  if (Array.isArray(node.allOf)) return node.allOf.length === 1 ? convert(node.allOf[0], ctx) : anyValue(ctx.limits);

  const type = node.type ?? (isObject(node.properties) ? 'object' : node.items !== undefined ? 'array' : undefined);
  if (Array.isArray(type)) {
    const kinds = type.filter((t): t is string => typeof t === 'string');
    // One branch per type so that, e.g., the string branch of ["string", "null"] keeps its cap.
    return kinds.length === 1 ? convert({ ...node, type: kinds[0] }, ctx) : { oneOf: kinds.map((t) => convert({ ...node, type: t }, ctx)) };
  }
  switch (type) {
    case 'string':
      return stringNode(node, ctx.limits);
    case 'object':
      return objectNode(node, ctx);
    case 'array':
      return arrayNode(node, ctx);
    default:
      return typeof type === 'string' && PRIMITIVES.has(type) ? { type } : anyValue(ctx.limits);
  }
}

function ref(target: string, ctx: Ctx): Json {
  if (target === '#') {
    ctx.rootReferenced = true;
    return { $ref: `#/$defs/${ROOT_DEF}` };
  }
  const m = /^#\/(?:\$defs|definitions)\/(.+)$/.exec(target);
  return m ? { $ref: `#/$defs/${m[1]}` } : anyValue(ctx.limits);
}

function stringNode(node: Json, limits: GrammarLimits): Json {
  if (typeof node.format === 'string' && STRING_FORMATS.has(node.format)) return { type: 'string', format: node.format };
  const max = Math.min(numberOr(node.maxLength, limits.maxStringLength), limits.maxStringLength);
  const min = Math.min(numberOr(node.minLength, 0), max);
  return { type: 'string', ...(min > 0 ? { minLength: min } : {}), maxLength: max };
}

function objectNode(node: Json, ctx: Ctx): Json {
  const props = isObject(node.properties) ? node.properties : {};
  const required = new Set(Array.isArray(node.required) ? node.required.filter((k): k is string => typeof k === 'string') : []);
  const properties: Json = {};
  for (const [key, value] of Object.entries(props)) if (required.has(key)) properties[key] = convert(value, ctx);
  const extra = node.additionalProperties;
  // JSON Schema leaves objects open unless told otherwise; a schema with properties is treated
  // as closed (zod's default) so the model does not drift into inventing keys.
  const open = extra === true || isObject(extra) || (extra === undefined && Object.keys(props).length === 0);
  if (!open) return { type: 'object', properties };
  return {
    type: 'object',
    properties,
    additionalProperties: isObject(extra) ? convert(extra, ctx) : true,
    maxProperties: Object.keys(properties).length + ctx.limits.maxItems,
  };
}

function arrayNode(node: Json, ctx: Ctx): Json {
  const prefix = Array.isArray(node.prefixItems) ? node.prefixItems.map((p) => convert(p, ctx)) : undefined;
  const max = Math.max(Math.min(numberOr(node.maxItems, ctx.limits.maxItems), ctx.limits.maxItems), prefix?.length ?? 0);
  const min = Math.min(numberOr(node.minItems, 0), max);
  const items = node.items === false ? undefined : node.items === undefined || node.items === true ? undefined : convert(node.items, ctx);
  return {
    type: 'array',
    ...(prefix ? { prefixItems: prefix } : {}),
    ...(items ? { items } : {}),
    ...(min > 0 ? { minItems: min } : {}),
    maxItems: max,
  };
}

/** Any JSON value, with the same caps as everything else. */
function anyValue(limits: GrammarLimits): Json {
  return {
    oneOf: [
      { type: 'string', maxLength: limits.maxStringLength },
      { type: ['number', 'boolean', 'null'] },
      { type: 'array', maxItems: limits.maxItems },
      { type: 'object', additionalProperties: true, maxProperties: limits.maxItems },
    ],
  };
}

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function numberOr(v: unknown, fallback: number): number {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.floor(v) : fallback;
}
