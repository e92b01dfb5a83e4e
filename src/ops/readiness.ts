/**
 * Readiness (`/readyz`): ready only while the run can make progress: started, its source
 * connected, not every model endpoint down, and not shutting down. The judging thread reports
 * the facts; the thread that serves the probe knows whether a stop was asked for.
 */
import type { StageView } from './inputs.js';

export interface ReadinessFacts {
  /** the stage is running (input opened, jury up) */
  started: boolean;
  sourceConnected: boolean;
  endpointsDown: string[];
  allEndpointsDown: boolean;
}

/** Where the run is, as the serving thread sees it. */
export type RunPhase = 'running' | 'stopping' | 'finished';

export interface Readiness {
  ready: boolean;
  /** one short line: why not, or "ready" */
  reason: string;
}

export const NOT_STARTED: ReadinessFacts = { started: false, sourceConnected: false, endpointsDown: [], allEndpointsDown: false };

/** The facts of a running stage (undefined: not running yet). */
export function factsOf(view: StageView | undefined): ReadinessFacts {
  if (!view) return NOT_STARTED;
  const endpoints = view.health?.endpoints() ?? [];
  return {
    started: true,
    sourceConnected: view.source.connected?.() ?? true,
    endpointsDown: endpoints.filter((e) => e.state !== 'up').map((e) => e.name),
    allEndpointsDown: view.health?.allDown() ?? false,
  };
}

export function readinessOf(phase: RunPhase, f: ReadinessFacts): Readiness {
  if (phase === 'stopping') return { ready: false, reason: 'shutting down: finishing and committing the records in flight' };
  if (phase === 'finished') return { ready: false, reason: 'finished: the run is over' };
  if (!f.started) return { ready: false, reason: 'starting: opening the input and the jury' };
  if (!f.sourceConnected) return { ready: false, reason: 'source not connected' };
  if (f.allEndpointsDown) return { ready: false, reason: `all model endpoints down${f.endpointsDown.length ? ` (${f.endpointsDown.join(', ')})` : ''}: intake paused` };
  return { ready: true, reason: f.endpointsDown.length ? `ready (down: ${f.endpointsDown.join(', ')})` : 'ready' };
}
