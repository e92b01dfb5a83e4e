/**
 * Structured-output dialects: how one call's JSON Schema reaches an OpenAI-compatible server.
 * Servers disagree on the shape, and most reject the shapes they do not know:
 *
 *   json_schema         response_format {type: "json_schema", json_schema: {name, schema}}  OpenAI, vLLM, SGLang, serve-local
 *   json_object_schema  response_format {type: "json_object", schema}                     llama.cpp server, llama-cpp-python
 *   guided_json         a top-level `guided_json: schema` body field                        vLLM (older releases)
 *   json_object         response_format {type: "json_object"}: JSON mode, no schema          most servers
 *   none                nothing: the prompt alone asks for JSON
 *
 * Only structured calls carry a schema; free-text calls (deliberation turns) never get a field.
 */
import type { EndpointConfig } from '../../schemas/config.js';

export type ResponseFormatSetting = EndpointConfig['response_format'];
export type Dialect = Exclude<ResponseFormatSetting, 'auto'>;

/** What `auto` tries, best first: the first the server accepts and honours wins. */
export const AUTO_ORDER: readonly Dialect[] = ['json_schema', 'json_object_schema', 'guided_json', 'json_object'];

/**
 * The body fields that carry `schema` in `dialect`. Strictness is off: our zod schemas accept
 * optional and lenient fields that OpenAI's strict mode would have to forbid.
 */
export function dialectFields(dialect: Dialect, schema: Record<string, unknown>): Record<string, unknown> {
  switch (dialect) {
    case 'json_schema':
      return { response_format: { type: 'json_schema', json_schema: { name: 'reply', schema, strict: false } } };
    case 'json_object_schema':
      return { response_format: { type: 'json_object', schema } };
    case 'guided_json':
      return { guided_json: schema };
    case 'json_object':
      return { response_format: { type: 'json_object' } };
    case 'none':
      return {};
  }
}
