/**
 * The two fixed replies of the juror-turn prompt and their recognisers. They live in the prompt
 * layer (src/prompts/deliberation-wire.ts) so the simulator can read them without the jury.
 */
export { AGREE_ALL, NOTHING_NEW, saysAgreeAll, saysNothingNew } from '../../prompts/deliberation-wire.js';
