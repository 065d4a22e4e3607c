// The public library API.
export { Session, ParanodeError } from './session';
export type { SessionOptions, Resource, MetricValue, ProbeResult } from './session';
export type { ThreadLimits } from './thread';
export { AttachError } from '../inspector/process-control';
export { SnippetError } from '../instrument/snippet';
export { ProbeSyntaxError, parseProbe } from '../instrument/probe';
export { TimeHistogram } from '../data/histogram';
export { MetricManager, MetricInstance } from '../metrics/manager';
export type { MetricInstanceValue } from '../metrics/manager';
export { MdlLibrary, STANDARD_MDL } from '../mdl/library';
export { MdlError } from '../mdl/parser';
export { FocusError } from '../mdl/evaluate';
export { calibration, loadCalibration } from '../cost/calibration';
export type { Calibration } from '../cost/calibration';
