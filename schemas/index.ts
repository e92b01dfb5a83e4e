export * from './defect.js';
export * from './trace.js';
export * from './usage.js';
export * from './verdict.js';
export * from './config.js';
export * from './outputs.js';
export * from './repair.js';
