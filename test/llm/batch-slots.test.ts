// In batch mode every model on an endpoint fills batches of its own, so the endpoint's limiter
// must hold a full batch per model: three jurors on one endpoint wait in three batches at once.
import { describe, expect, it } from 'vitest';
import { batchSlots } from '../../src/compose/runtime.js';
import { parseConfig } from '../../src/config/load.js';

const config = (models: string[], maxRequests?: number) =>
  parseConfig({
    endpoints: { api: { base_url: 'http://127.0.0.1:9/v1', ...(maxRequests ? { batch: { max_requests: maxRequests } } : {}) }, other: { base_url: 'http://127.0.0.1:9/v1' } },
    jurors: models.map((model, i) => ({ id: `j${i}`, endpoint: 'api', model })),
    consolidator: { id: 'c', endpoint: 'other', model: 'judge-big' },
    mode: 'consolidation',
    batch: { enabled: true },
  });

describe('batch slots of an endpoint', () => {
  it('a full batch per distinct model that calls it', () => {
    const c = config(['m-a', 'm-b', 'm-c'], 1000);
    expect(batchSlots(c, 'api', c.endpoints.api!)).toBe(3000);
    expect(batchSlots(c, 'other', c.endpoints.other!)).toBe(50_000);
  });

  it('seats sharing a model share its batches', () => {
    const c = config(['m-a', 'm-a', 'm-b'], 1000);
    expect(batchSlots(c, 'api', c.endpoints.api!)).toBe(2000);
  });
});
