/** The contract names the viewer uses, in one place (types and the orders it sorts by). */
export { FILTER_DECISIONS, type CommitManifest, type FileFormat, type ManifestTableName, type ReviewRow } from '../../schemas/outputs.js';
export { IMPACTS as IMPACTS_ORDER } from '../../schemas/defect.js';
