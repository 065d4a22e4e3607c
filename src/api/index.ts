// The public library API: a facade that re-exports what a program using
// paranode needs (the session itself lives in src/session).
export { Session } from '../session/session';
export { ParanodeError } from '../session/errors';
export type { SessionOptions, Resource, ProbeResult } from '../session/session';
export type { MetricValue } from '../session/series';
export type { ThreadLimits } from '../session/thread';
export { AttachError } from '../inspector/process-control';
export { SnippetError } from '../instrument/snippet';
export { ProbeSyntaxError, parseProbe, parseProbes } from '../instrument/probe';
export { TimeHistogram } from '../data/histogram';
export { MetricManager, MetricInstance } from '../metrics/manager';
export type { MetricInstanceValue } from '../metrics/manager';
export { MdlLibrary, STANDARD_MDL } from '../mdl/library';
export { MdlError } from '../mdl/parser';
export { FocusError } from '../mdl/evaluate';
export { calibration, loadCalibration } from '../cost/calibration';
export type { Calibration } from '../cost/calibration';
export { diagnose } from '../consultant/diagnose';
export type { DiagnoseOptions, DiagnoseTarget } from '../consultant/diagnose';
export { PerformanceConsultant } from '../consultant/search';
export type { ConsultantOptions, SearchNode, NodeState, TestRecord } from '../consultant/search';
export { HYPOTHESES } from '../consultant/hypotheses';
export type { Hypothesis } from '../consultant/hypotheses';
export { renderDiagnosis, renderHistory } from '../consultant/report';
export type { Diagnosis, Bottleneck } from '../consultant/report';
export { predictPlan } from '../cost/predict';
export type { Prediction } from '../cost/predict';
