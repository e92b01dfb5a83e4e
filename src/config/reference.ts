/**
 * docs/config.md, generated from the zod schemas: every key of JuryConfig with its type, default
 * and the description the schema carries. `npm run docs:config` writes it; a test regenerates it
 * in memory and fails when the checked-in page has drifted from the schemas.
 */
import YAML from 'yaml';
import { z } from 'zod';
import { ExternalSeatConfig, JurorConfig, JuryConfig, ParticipantConfig } from '../../schemas/config.js';
import { OPERATIONAL_KEYS } from './load.js';

type Schema = z.core.$ZodType;

export interface ReferenceRow {
  path: string;
  type: string;
  default: string;
  meaning: string;
}

export interface Section {
  title: string;
  intro: string;
  rows: ReferenceRow[];
  /** defaults too long for a table cell, shown as YAML under it */
  longDefaults: Array<{ path: string; value: unknown }>;
}

/** A schema with its wrappers (optional, default, prefault, nullable) peeled off. */
interface Unwrapped {
  core: Schema;
  optional: boolean;
  nullable: boolean;
  hasDefault: boolean;
  defaultValue: unknown;
  description: string | undefined;
}

const SEAT_SECTION = 'Seats';
const EXTERNAL_SECTION = 'External seats';
const LONG_DEFAULT = 40;

function description(s: Schema): string | undefined {
  return z.globalRegistry.get(s)?.description;
}

function unwrap(schema: Schema): Unwrapped {
  const u: Unwrapped = { core: schema, optional: false, nullable: false, hasDefault: false, defaultValue: undefined, description: undefined };
  for (;;) {
    u.description ??= description(u.core);
    const def = u.core._zod.def;
    if (def.type === 'optional') u.optional = true;
    else if (def.type === 'nullable') u.nullable = true;
    else if (def.type === 'default' || def.type === 'prefault') {
      if (!u.hasDefault) u.defaultValue = (def as z.core.$ZodDefaultDef).defaultValue;
      u.hasDefault = true;
    } else return u;
    u.core = (def as z.core.$ZodOptionalDef).innerType;
  }
}

function objectShape(s: Schema): Record<string, Schema> | undefined {
  const def = s._zod.def;
  return def.type === 'object' ? (def as z.core.$ZodObjectDef).shape : undefined;
}

/** The object a record or array holds, for keys written `<name>` and `[]`. */
function container(s: Schema): { kind: 'record' | 'array'; item: Unwrapped } | undefined {
  const def = s._zod.def;
  if (def.type === 'record') return { kind: 'record', item: unwrap((def as z.core.$ZodRecordDef).valueType) };
  if (def.type === 'array') return { kind: 'array', item: unwrap((def as z.core.$ZodArrayDef).element) };
  return undefined;
}

// A `jurors` entry is a seat too: a model seat, or an external one (its own section).
const isSeat = (s: Schema): boolean => s === ParticipantConfig || s === JurorConfig;

// --- types, from the JSON Schema zod derives for a leaf ---------------------------------------

type Json = Record<string, unknown>;

function bounds(js: Json): string {
  const limit = (v: unknown): v is number => typeof v === 'number' && Math.abs(v) < Number.MAX_SAFE_INTEGER;
  const parts: string[] = [];
  if (limit(js.exclusiveMinimum)) parts.push(`> ${js.exclusiveMinimum}`);
  if (limit(js.minimum) && limit(js.maximum)) return ` ${js.minimum}–${js.maximum}`;
  if (limit(js.minimum)) parts.push(`≥ ${js.minimum}`);
  if (limit(js.exclusiveMaximum)) parts.push(`< ${js.exclusiveMaximum}`);
  if (limit(js.maximum)) parts.push(`≤ ${js.maximum}`);
  return parts.length ? ` ${parts.join(', ')}` : '';
}

function stringType(js: Json): string {
  if (js.format === 'uri') return 'URL';
  if (typeof js.pattern === 'string') return `string matching \`${js.pattern}\``;
  return js.minLength === 1 ? 'non-empty string' : 'string';
}

/** "list of strings", "list of non-empty strings": the first noun of an item type, pluralized. */
function plural(t: string): string {
  return t.replace(/^((?:non-empty )?(?:string|integer|number|boolean))\b/, '$1s');
}

function jsonType(js: Json): string {
  if (Array.isArray(js.anyOf)) return (js.anyOf as Json[]).map(jsonType).join(' or ');
  if (Array.isArray(js.enum)) return `one of ${js.enum.map((v) => `\`${String(v)}\``).join(', ')}`;
  if ('const' in js) return `\`${JSON.stringify(js.const)}\``;
  switch (js.type) {
    case 'integer':
      return `integer${bounds(js)}`;
    case 'number':
      return `number${bounds(js)}`;
    case 'string':
      return stringType(js);
    case 'boolean':
    case 'null':
      return js.type;
    case 'array': {
      const min = typeof js.minItems === 'number' && js.minItems > 0 ? ` (at least ${js.minItems})` : '';
      return `list of ${plural(jsonType((js.items ?? {}) as Json))}${min}`;
    }
    case 'object': {
      const values = js.additionalProperties;
      if (values && typeof values === 'object' && !js.properties) return `map of name → ${jsonType(values as Json)}`;
      return 'object';
    }
    default:
      return 'any JSON value';
  }
}

function leafType(u: Unwrapped): string {
  const t = jsonType(z.toJSONSchema(u.core, { io: 'input', unrepresentable: 'any' }) as Json);
  return u.nullable ? `${t} or null` : t;
}

// --- rows --------------------------------------------------------------------------------------

function defaultText(u: Unwrapped, path: string, section: Section, structured: boolean): string {
  if (!u.hasDefault) return u.optional ? '—' : 'required';
  if (structured) return 'see its keys';
  const json = JSON.stringify(u.defaultValue);
  if (json.length <= LONG_DEFAULT) return `\`${typeof u.defaultValue === 'string' ? u.defaultValue : json}\``;
  section.longDefaults.push({ path, value: u.defaultValue });
  return 'below the table';
}

function meaningOf(u: Unwrapped, path: string): string {
  if (!u.description) throw new Error(`config key ${path} has no description: add .describe() to its schema`);
  return u.description;
}

interface Walk {
  /** where a seat is used, for the Seats section's intro */
  seatUsers: string[];
  /** a list of jurors was met: it may hold external seats */
  external: boolean;
}

function seatRow(u: Unwrapped, path: string, list: boolean, section: Section, walk: Walk): ReferenceRow {
  walk.seatUsers.push(list ? `${path}[]` : path);
  const held = container(u.core);
  if (held && held.item.core === JurorConfig) walk.external = true;
  const min = list ? (z.toJSONSchema(u.core, { io: 'input', unrepresentable: 'any' }) as Json).minItems : undefined;
  const type = list ? `list of seats${typeof min === 'number' && min > 0 ? ` (at least ${min})` : ''}` : 'seat';
  return { path, type, default: defaultText(u, path, section, true), meaning: `${meaningOf(u, path)} Keys: see [${SEAT_SECTION}](#seats).` };
}

/** One row per key of `shape` under `prefix`, descending into objects, maps and lists. */
function walkShape(shape: Record<string, Schema>, prefix: string, section: Section, walk: Walk): void {
  for (const [key, child] of Object.entries(shape)) walkKey(unwrap(child), prefix ? `${prefix}.${key}` : key, section, walk);
}

function walkKey(u: Unwrapped, path: string, section: Section, walk: Walk): void {
  if (isSeat(u.core)) return void section.rows.push(seatRow(u, path, false, section, walk));
  const shape = objectShape(u.core);
  const held = container(u.core);
  if (held && isSeat(held.item.core)) return void section.rows.push(seatRow(u, path, true, section, walk));
  const heldShape = held ? objectShape(held.item.core) : undefined;
  if (shape) {
    section.rows.push({ path, type: 'object', default: defaultText(u, path, section, true), meaning: meaningOf(u, path) });
    walkShape(shape, path, section, walk);
  } else if (held && heldShape) {
    const type = held.kind === 'record' ? 'map of name → object' : 'list of objects';
    section.rows.push({ path, type, default: defaultText(u, path, section, false), meaning: meaningOf(u, path) });
    walkShape(heldShape, held.kind === 'record' ? `${path}.<name>` : `${path}[]`, section, walk);
  } else {
    section.rows.push({ path, type: leafType(u), default: defaultText(u, path, section, false), meaning: meaningOf(u, path) });
  }
}

function newSection(title: string, intro: string): Section {
  return { title, intro, rows: [], longDefaults: [] };
}

/** An object, or a map or list of objects, other than a seat (those share one section). */
function ownsSection(u: Unwrapped): boolean {
  if (isSeat(u.core)) return false;
  const held = container(u.core);
  return objectShape(u.core) !== undefined || (held !== undefined && !isSeat(held.item.core) && objectShape(held.item.core) !== undefined);
}

/** Top-level scalars and seats in one table; each structured top-level key in its own section. */
export function referenceSections(root: z.ZodObject = JuryConfig): Section[] {
  const walk: Walk = { seatUsers: [], external: false };
  const top = newSection('Top level', 'Keys at the root of the file. Structured keys have their own section below.');
  const rest: Section[] = [];
  for (const [key, child] of Object.entries(root.shape)) {
    const u = unwrap(child);
    if (!ownsSection(u)) {
      walkKey(u, key, top, walk);
      continue;
    }
    const section = newSection(key, meaningOf(u, key));
    walkKey(u, key, section, walk);
    // The section's own row moves to the top table; its meaning is the section's intro.
    const own = section.rows.shift()!;
    top.rows.push({ ...own, meaning: `See [${key}](#${key}).` });
    rest.push(section);
  }
  if (walk.seatUsers.length > 0) {
    const seats = newSection(SEAT_SECTION, `${meaningOf(unwrap(ParticipantConfig), SEAT_SECTION)} Used by ${walk.seatUsers.map((p) => `\`${p}\``).join(', ')}; \`<seat>\` below stands for any of them.`);
    walkShape(ParticipantConfig.shape, '<seat>', seats, walk);
    // Right after endpoints (or first): seats are what a reader configures next.
    const at = rest.findIndex((s) => s.title === 'endpoints') + 1;
    rest.splice(at, 0, seats);
    if (walk.external) {
      const ext = newSection(EXTERNAL_SECTION, `${meaningOf(unwrap(ExternalSeatConfig), EXTERNAL_SECTION)} Keys of a \`jurors[]\` entry with \`kind: external\` (docs/external-judges.md).`);
      walkShape(ExternalSeatConfig.shape, 'jurors[]', ext, walk);
      rest.splice(at + 1, 0, ext);
    }
  }
  return [top, ...rest];
}

// --- markdown ------------------------------------------------------------------------------------

const cell = (s: string): string => s.replace(/\|/g, '\\|');

function renderSection(s: Section): string {
  const lines = [`## ${s.title}`, '', s.intro, '', '| key | type | default | meaning |', '| --- | --- | --- | --- |'];
  for (const r of s.rows) lines.push(`| \`${cell(r.path)}\` | ${cell(r.type)} | ${cell(r.default)} | ${cell(r.meaning)} |`);
  for (const d of s.longDefaults) lines.push('', `Default of \`${d.path}\`:`, '', '```yaml', YAML.stringify(d.value).trimEnd(), '```');
  return lines.join('\n');
}

function intro(sections: Section[]): string {
  return `# Configuration reference

<!-- Generated from the zod schemas by \`npm run docs:config\` (src/config/reference.ts). Do not edit by hand: change the schema's .describe() text and regenerate. -->

The jury config is one YAML file (JSON when its name ends in \`.json\`), passed with
\`--config\` / \`-c\` to \`run\`, \`judge\`, \`eval\` and \`taxonomy induce\`. Without it those commands
use an embedded default: three simulated jurors and a simulated consolidator, served in-process.
[examples/jury.yaml](../examples/jury.yaml) is a commented example.

- **Checked on load.** Every key is validated and unknown keys are errors; each problem is
  reported with its path (\`jurors.1.endpoint: unknown endpoint "vlm"\`).
- **Relative paths** (\`endpoints.<name>.profile\`, \`endpoints.<name>.model_path\`, \`prompts_dir\`,
  \`cache.dir\`, \`audit_log.path\`, \`taxonomy.file\`, an external juror's \`path\`) written in the
  file resolve against the config file's folder, so a config works from any directory; defaults
  (\`cache.dir\` left out) stay under the directory the command runs in. \`model_path\` also
  expands \`~\` and accepts a model catalog name.
- **Secrets never go in the file.** An endpoint names the environment variable holding its API
  key (\`api_key_env\`), Kafka SASL names the variables holding user and password
  (\`kafka.sasl.username_env\`, \`password_env\`), and S3 credentials come from the AWS SDK's
  standard chain (environment, shared profile, web identity, container or instance role).
  \`$KAFKA_BROKERS\`, \`$S3_ENDPOINT\` and \`$AWS_REGION\` fill in \`kafka.brokers\`, \`s3.endpoint\` and
  \`s3.region\` when those are absent.
- **\`config_hash\`** (a column of every verdict) hashes what shapes a verdict. It leaves out
  ${OPERATIONAL_KEYS.map((k) => `\`${k}\``).join(', ')}, so moving a server, a folder or a bucket does not change it.

In the tables, \`<name>\` is a key you choose, \`[]\` is each element of a list, "required" means
the key must be given and "—" that it may be left out.

${sections.map((s) => `- [${s.title}](#${s.title.toLowerCase().replace(/ /g, '-')})`).join('\n')}`;
}

/** The whole of docs/config.md. */
export function renderConfigReference(): string {
  const sections = referenceSections();
  return `${[intro(sections), ...sections.map(renderSection)].join('\n\n')}\n`;
}
