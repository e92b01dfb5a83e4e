// Config loading and jury opening live with the library (src/api/open-jury.ts), so the commands
// and `createJury` / `runStage` read a config and plug in simulated endpoints the same way.
export { loadJuryConfig, openJury, type JuryInput } from '../api/open-jury.js';
// The shared options live in a light module so registering a command stays cheap.
export { JURY_OPTION_HELP, juryOption, type JuryOptions } from './jury-options.js';
