import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONSOLIDATOR_MODEL, DEFAULT_JUROR_MODELS, defaultProfile } from '../../src/sim/default-profile.js';
import { loadProfileFile, modelProfile, parseProfile, ProfileError, withoutFaults, withoutLatency } from '../../src/sim/profile.js';

describe('simulator profile', () => {
  it('ships a default with three distinct jurors, a consolidator and a default entry', () => {
    const p = defaultProfile();
    const jurors = DEFAULT_JUROR_MODELS.map((m) => p.models[m]!);
    expect(new Set(jurors.map((j) => j.recall)).size).toBe(3);
    expect(new Set(jurors.map((j) => j.false_positive_rate)).size).toBe(3);
    expect(p.models[DEFAULT_CONSOLIDATOR_MODEL]!.consolidator.accept_true).toBeGreaterThan(p.models[DEFAULT_CONSOLIDATOR_MODEL]!.consolidator.accept_false);
    expect(modelProfile(p, 'some-unknown-model')).toBe(p.default);
    for (const j of jurors) {
      expect(j.latency_ms).not.toBe(0);
      expect(j.latency_ms !== 0 && j.latency_ms.median).toBeLessThan(100); // fast: tens of ms
      expect(j.rate_timeout).toBe(0);
    }
  });

  it('loads YAML, merging entries over `default` field by field (consolidator too)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sim-profile-'));
    const file = join(dir, 'p.yaml');
    writeFileSync(
      file,
      ['seed: 5', 'models:', '  default:', '    recall: 0.5', '    max_concurrency: 2', '    consolidator: { accept_true: 0.8 }', '  judge:', '    false_positive_rate: 0.2', '    consolidator: { fill_recall: 0.1 }', '    latency_ms: { median: 10 }'].join('\n'),
    );
    const p = loadProfileFile(file);
    expect(p.seed).toBe(5);
    const m = p.models.judge!;
    expect(m).toMatchObject({ recall: 0.5, false_positive_rate: 0.2, max_concurrency: 2, latency_ms: { median: 10, sigma: 0.4 } });
    expect(m.consolidator).toEqual({ accept_true: 0.8, accept_false: 0.25, fill_recall: 0.1, fill_false_positive_rate: 0 });
    const json = join(dir, 'p.json');
    writeFileSync(json, JSON.stringify({ models: { x: { recall: 1 } } }));
    expect(loadProfileFile(json)).toMatchObject({ seed: 0, default: null, models: { x: { recall: 1 } } });
  });

  it('rejects bad profiles with the model and field named', () => {
    expect(() => parseProfile({ models: { a: { recall: 1.5 } } })).toThrow(ProfileError);
    expect(() => parseProfile({ models: { a: { recal: 0.5 } } })).toThrow(/recal/);
    expect(() => parseProfile({ models: { a: { rate_429: 0.6, rate_500: 0.6 } } })).toThrow(/model "a".*rate_429 \+ rate_500/s);
    expect(() => parseProfile({ models: { a: { severity_mix: { severe: 1 } } } })).toThrow(/severe/);
    expect(() => parseProfile({ models: { a: { severity_mix: { fatal: 0 } } } })).toThrow(/positive weight/);
    expect(() => parseProfile({ modles: {} })).toThrow(ProfileError);
  });

  it('has no fallback for unknown models unless a default entry exists', () => {
    const p = parseProfile({ models: { a: {} } });
    expect(modelProfile(p, 'b')).toBeNull();
    expect(modelProfile(p, 'a')).not.toBeNull();
  });

  it('can strip faults and latency', () => {
    const p = withoutLatency(withoutFaults(defaultProfile()));
    for (const m of [...Object.values(p.models), p.default!]) {
      expect(m.latency_ms).toBe(0);
      expect(m.rate_429 + m.rate_500 + m.rate_timeout + m.rate_malformed_json + m.rate_schema_invalid + m.rate_fenced_json + m.rate_prose_json).toBe(0);
    }
  });
});
