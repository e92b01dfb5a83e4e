/**
 * The connector registry (src/pipeline/connector.ts) as the commands use it, with the real
 * registrations of src/compose/connectors.ts loaded: URLs find their connector by scheme, an
 * unknown scheme is refused with the registered ones named, and a scheme cannot be taken twice.
 */
import { describe, expect, it } from 'vitest';
import '../../src/compose/connectors.js';
import { findInputConnector, inputConnector, inputConnectors, outputConnector, registerInput, schemeOf } from '../../src/pipeline/connector.js';

describe('connector registry', () => {
  it('finds each registered input by its URL scheme; a path is the local connector', () => {
    expect(inputConnector('traces/').scheme).toBeNull();
    expect(inputConnector('/data/a.jsonl.gz').place).toBe('local');
    expect(inputConnector('s3://bucket/prefix').place).toBe('bucket');
    expect(inputConnector('kafka://traces?group=g')).toMatchObject({ scheme: 'kafka', resumesFromGroup: true });
    expect(inputConnector('kafka://traces').unbounded).toMatch(/no end to count/);
    expect(inputConnector('stdin://')).toMatchObject({ scheme: 'stdin', place: 'stream', resumesFromGroup: false, readsStdin: true });
    expect(outputConnector('s3://bucket/out/').location('s3://bucket/out/')).toBe('s3://bucket/out');
  });

  it('refuses an unknown scheme with one line naming the registered ones, rather than taking it for a folder', () => {
    expect(() => inputConnector('ftp://host/traces')).toThrow('unsupported URL scheme "ftp://" in ftp://host/traces (use kafka://, s3://, stdin:// or a local path)');
    expect(() => outputConnector('kafka://topic')).toThrow('unsupported URL scheme "kafka://" in kafka://topic (use s3:// or a local path)');
    expect(findInputConnector('ftp://host/traces')).toBeUndefined();
  });

  it('lists local paths first for --help, then the schemes in the order they registered', () => {
    expect(inputConnectors().map((c) => c.scheme)).toEqual([null, 's3', 'kafka', 'stdin']);
  });

  it('refuses a second connector for a scheme already taken', () => {
    const again = { ...inputConnector('stdin://') };
    expect(() => registerInput(again)).toThrow('two input connectors registered for stdin://');
  });

  it('reads the scheme case-insensitively and only before "://"', () => {
    expect(schemeOf('S3://Bucket/x')).toBe('s3');
    expect(schemeOf('C:/data/traces')).toBeNull();
    expect(schemeOf('./kafka://odd-folder')).toBeNull();
  });
});
