/**
 * Redaction layer: secrets never leave an attempt. Replies and reasoning are redacted before any
 * other layer sees them, and whatever an attempt throws becomes a ProviderError whose message is
 * redacted (errors the provider made itself are already ProviderErrors and pass as they are).
 */
import type { AttemptLayer, Completion } from '../model.js';
import type { Redactor } from '../../util/redact.js';
import { abortReason } from '../retry.js';
import { ProviderError } from '../types.js';

export function redactLayer(redactor: Redactor): AttemptLayer {
  return (next) => async (req, a) => {
    let c: Completion;
    try {
      c = await next(req, a);
    } catch (err) {
      throw asProviderError(err, a.signal, redactor);
    }
    return { ...c, content: redactor.text(c.content), ...(c.reasoning !== undefined ? { reasoning: redactor.text(c.reasoning) } : {}) };
  };
}

export function asProviderError(err: unknown, signal: AbortSignal, redactor: Redactor): ProviderError {
  if (err instanceof ProviderError) return err;
  if (signal.aborted) {
    const reason = abortReason(signal);
    return new ProviderError(redactor.text(`aborted by caller: ${reason.message}`), false);
  }
  // A provider that throws something else (a bug, a simulator quirk) gets one more chance.
  const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return new ProviderError(redactor.text(message), true);
}
