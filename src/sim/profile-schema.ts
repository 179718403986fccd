/**
 * A profile's shape, declared once: the schema checks a profile file and
 * the types the simulator reads (ModelSpec and its parts, the run defaults)
 * are inferred from it. profiles/README.md is the reference for users;
 * profile.ts reads files and turns the first problem into one line naming
 * the file and the field.
 */
import { readHedgeDelay, type HedgeDelay } from '../core/delay-spec.js'
import { exact, fields, type Infer, notArray, int, nonEmpty, num, oneOf, PARENT, pathTo, v } from '../core/schema.js'

export const MAX_REPLICAS = 64

/** A { min, max } object with min <= max (both >= 0). */
const rangeFields = { min: num(0), max: num(0) }
/** A range's max below its min, reported on the max. */
function maxNotBelowMin<T>(rangeOf: (value: T) => { min: number; max: number } | null) {
  return v.rawCheck<T>(({ dataset, addIssue }) => {
    const range = dataset.typed ? rangeOf(dataset.value) : null
    if (range !== null && range.max < range.min) addIssue({ message: `must be >= ${PARENT}.min (${range.min})`, path: pathTo('max') })
  })
}
const RangeSchema = v.pipe(
  exact(rangeFields),
  maxNotBelowMin((r) => r),
)
export type Range = Infer<typeof RangeSchema>

const BASE_TYPES = ['uniform', 'lognormal', 'fixed'] as const
const BaseSchema = v.pipe(
  notArray(
    v.variant(
      'type',
      [
        fields({ type: v.literal('uniform'), ...rangeFields }),
        fields({ type: v.literal('lognormal'), median: num(0), sigma: num(0, 5) }),
        fields({ type: v.literal('fixed'), ms: num(0) }),
      ],
      // The one issue a variant raises itself: its discriminator (with a path) or the value (not an object).
      (issue) => (issue.path ? `must be one of ${BASE_TYPES.map((t) => `"${t}"`).join(', ')}` : 'must be an object'),
    ),
  ),
  maxNotBelowMin((b) => (b.type === 'uniform' ? b : null)),
)
/** How long normal work takes. */
export type BaseSpec = Infer<typeof BaseSchema>

const STALL_TYPES = (issue: v.BaseIssue<unknown>) => (issue.path ? 'must be one of "independent", "pause"' : 'must be an object')

const IndependentStallSchema = fields({
  type: v.literal('independent'),
  probability: num(0, 1),
  /** Extra time added to a stalled request: fixed, or uniform in a range. */
  ms: v.lazy((input) => (typeof input === 'object' && input !== null ? RangeSchema : num(0))),
})
export type IndependentStallSpec = Infer<typeof IndependentStallSchema>

const pauseFields = {
  type: v.literal('pause'),
  /** Mean gap between the end of one pause and the start of the next (exponential). */
  everyMs: num(1),
  durationMs: RangeSchema,
  scope: oneOf(['replica', 'shared']),
}
const PauseStallSchema = fields(pauseFields)
export type PauseStallSpec = Infer<typeof PauseStallSchema>

const StallSchema = notArray(v.variant('type', [IndependentStallSchema, PauseStallSchema], STALL_TYPES))
export type StallSpec = Infer<typeof StallSchema>

/** A replica's own stalls: a shared pause is one dependency behind every replica, so it has no place in an override. */
const OverrideStallSchema = notArray(
  v.variant(
    'type',
    [
      IndependentStallSchema,
      fields({
        ...pauseFields,
        scope: v.pipe(
          pauseFields.scope,
          v.check((s) => s !== 'shared', 'cannot be "shared" in an override (a shared dependency is the same for every replica)'),
        ),
      }),
    ],
    STALL_TYPES,
  ),
)

const arrayOf = <S extends v.GenericSchema>(item: S) => v.array(item, 'must be an array')

const QueueSchema = exact({
  /** Requests served at once by one replica. */
  workers: int(1, 100_000),
  /** Requests allowed to wait for a worker; beyond that the replica answers 503. */
  depth: int(0, 1_000_000),
})
export type QueueSpec = Infer<typeof QueueSchema>

const ErrorSchema = exact({ rate: num(0, 1), status: int(400, 599) })
export type ErrorSpec = Infer<typeof ErrorSchema>

/** Changes for one replica: `base`, `queue`, `errors` replace; `addMs` and `stalls` add. Its index is checked against the profile's replicas. */
const OverrideSchema = exact({
  /** 0-based replica index, below the profile's replicas (checkOverrides: the bound is another field). */
  index: v.custom<number>(() => true),
  addMs: v.optional(num(0)),
  base: v.optional(BaseSchema),
  /** Extra stalls for this replica only (shared pauses are not allowed here). */
  stalls: v.optional(arrayOf(OverrideStallSchema)),
  queue: v.optional(QueueSchema),
  errors: v.optional(ErrorSchema),
  /** The replica dies (stops listening, drops its connections) once it has received this many requests. */
  dieAfter: v.optional(int(1, 10_000_000)),
})
export type ReplicaOverride = Infer<typeof OverrideSchema>

/** Latency that wanders over time, on every replica alike (sim/drift.ts). */
const DriftSchema = exact({ sigma: num(0, 2), tauMs: num(1) })
export type DriftSpec = Infer<typeof DriftSchema>

const ModelSchema = exact({
  base: BaseSchema,
  /** Constant added to every request (network, parsing). */
  addMs: v.optional(num(0)),
  stalls: v.optional(arrayOf(StallSchema)),
  queue: v.optional(QueueSchema),
  errors: v.optional(ErrorSchema),
  overrides: v.optional(arrayOf(OverrideSchema)),
  drift: v.optional(DriftSchema),
})
export type ModelSpec = Infer<typeof ModelSchema>

const HEDGE_DELAY = 'must be "auto", a percentile like "p95", or a number of milliseconds'
const count = int(1, 10_000_000)
const positive = num(Number.MIN_VALUE)

/** Default run options for `hedgebench --profile NAME`. */
const RunDefaultsSchema = exact({
  concurrency: v.optional(count),
  requests: v.optional(count),
  fanout: v.optional(count),
  durationMs: v.optional(positive),
  rate: v.optional(positive),
  slowMs: v.optional(positive),
  timeoutMs: v.optional(positive),
  warmup: v.optional(int(0, 10_000_000)),
  mode: v.optional(oneOf(['plain', 'hedged', 'both'])),
  hedgeDelay: v.optional(
    v.custom<HedgeDelay>(
      (raw) => readHedgeDelay(raw) !== null,
      (issue) => (typeof issue.input === 'number' ? 'must be a number >= 0' : HEDGE_DELAY),
    ),
  ),
  maxAttempts: v.optional(int(2, 5)),
  budgetPct: v.optional(num(0, 100)),
})
export type ProfileRunDefaults = Infer<typeof RunDefaultsSchema>

const ProfileFields = exact({
  name: nonEmpty(),
  description: nonEmpty(),
  replicas: int(1, MAX_REPLICAS),
  seed: v.optional(int(0, 0xffffffff)),
  model: ModelSchema,
  run: v.optional(RunDefaultsSchema),
})

/** Override indexes the field types cannot check alone: below the profile's replica count, each replica once. */
function checkOverrides({ dataset, addIssue }: v.RawCheckContext<Infer<typeof ProfileFields>>): void {
  if (!dataset.typed) return
  const { replicas, model } = dataset.value
  const seen = new Set<number>()
  for (const [i, ov] of (model.overrides ?? []).entries()) {
    const at = (message: string) => addIssue({ message, path: pathTo('model', 'overrides', i, 'index') })
    if (!Number.isInteger(ov.index) || ov.index < 0 || ov.index >= replicas) return at(`must be an integer between 0 and ${replicas - 1}`)
    if (seen.has(ov.index)) return at(`repeats replica ${ov.index}`)
    seen.add(ov.index)
  }
}

export const ProfileSchema = v.pipe(ProfileFields, v.rawCheck(checkOverrides))
