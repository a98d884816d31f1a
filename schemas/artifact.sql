-- specd calibration artifact, calibration.sqlite, schema version 5 (PRAGMA user_version).
-- The tables of one model pair's artifact (schemas/README.md): the prompts each calibration ran,
-- CSD's correction memory, ARC-Decode's constants and held-out audit, and the thresholds the
-- runtime deploys. Version 2 added arc_constants and arc_audit (version 1: the same without them);
-- version 3 added sweep_runs and sweep_categories (version 2: the same without them); version 4
-- added arc_gate and the per-prompt columns of sweep_categories (version 3: the same without them); version 5
-- added sweep_categories' tv_mean and tv_sd (version 4: the same without them). The writer inserts rows in
-- primary-key order in one transaction, so equal contents give equal table dumps.
-- prompts.prompt_index is the calibration's unit: with K samples per prompt (manifest
-- options.samples_per_prompt, default 1) sample k of prompt i among P is k*P + i, so with K = 1
-- it is the prompt's index in the prompts file.
-- Compiled in at build time (runtime/CMakeLists.txt); a change that existing readers cannot read
-- needs a new version (see the upgrade rule in schemas/README.md).

CREATE TABLE prompts (
  policy        TEXT NOT NULL,     -- the calibration that ran the prompt: csd, sam_corpus, arc
  prompt_index  INTEGER NOT NULL,  -- index of the prompt in the prompts file, from 0
  prompt_id     TEXT NOT NULL,     -- the prompt's id in that file
  category      TEXT NOT NULL,
  prompt_tokens INTEGER NOT NULL,
  new_tokens    INTEGER NOT NULL,
  steps         INTEGER NOT NULL,  -- decoding steps (speculative steps for csd)
  drafted       INTEGER NOT NULL,  -- drafted tokens verified
  accepted      INTEGER NOT NULL,  -- drafted tokens accepted
  rejections    INTEGER NOT NULL,  -- rejection events (rows of /csd/rejections for this prompt; 0 for arc)
  -- No times: equal calibrations give equal tables (the wall time is in the manifest's provenance).
  PRIMARY KEY (policy, prompt_index)
) WITHOUT ROWID;

-- CSD's correction memory: one row per (draft token, target token) pair the target rejected.
-- gap = z(draft token) - z(target token), the target's raw logits at the rejected position
-- (<= 0 under greedy verification). Quantiles are nearest-rank over the pair's sorted gaps.
CREATE TABLE csd_pairs (
  draft_token  INTEGER NOT NULL,
  target_token INTEGER NOT NULL,
  count        INTEGER NOT NULL CHECK (count > 0),
  gap_mean     REAL NOT NULL,
  gap_min      REAL NOT NULL,
  gap_p10      REAL NOT NULL,
  gap_median   REAL NOT NULL,
  gap_p90      REAL NOT NULL,
  gap_max      REAL NOT NULL,
  PRIMARY KEY (draft_token, target_token)
) WITHOUT ROWID;

-- ARC-Decode's constants (arc-decode.md Algorithm 1), one row per bucket, fitted on the
-- non-held-out samples of /arc/samples in that bucket with the finite-sample conformal rank
-- ceil((n + 1)(1 - delta)). `ordinal` keeps the fit's order: 0 is bucket 'all', then the buckets
-- asked for (e.g. 'depth=1', 'depth=2', ..., 'depth=10', which text order would scramble).
CREATE TABLE arc_constants (
  bucket      TEXT NOT NULL,
  ordinal     INTEGER NOT NULL UNIQUE CHECK (ordinal >= 0),
  samples     INTEGER NOT NULL CHECK (samples >= 0),  -- n: calibration samples in the bucket
  rank        INTEGER NOT NULL CHECK (rank >= 1),      -- the order statistic taken, 1-based; n + 1: too few samples
  c_s         REAL NOT NULL,  -- c'_s: quantile of js / u_emb_raw
  alpha_kappa REAL NOT NULL,  -- alpha kappa: quantile of js / u_logit_raw
  tau_delta   REAL NOT NULL,  -- quantile of U_min = min(c'_s u_emb_raw, alpha kappa u_logit_raw)
  PRIMARY KEY (bucket)
) WITHOUT ROWID;

-- ARC-Decode's held-out audit: coverage of JS <= U_min on the held-out samples of one group
-- ('all'/'all', 'category'/<workload category>, 'depth'/<depth>), with 95% Wilson score and
-- Clopper-Pearson intervals. `ordinal` keeps the audit's order ('all', categories, depths).
CREATE TABLE arc_audit (
  group_kind  TEXT NOT NULL CHECK (group_kind IN ('all', 'category', 'depth')),
  group_name  TEXT NOT NULL,
  ordinal     INTEGER NOT NULL UNIQUE CHECK (ordinal >= 0),
  samples     INTEGER NOT NULL CHECK (samples >= 0),
  covered     INTEGER NOT NULL CHECK (covered >= 0 AND covered <= samples),
  coverage    REAL NOT NULL,
  wilson_low  REAL NOT NULL,
  wilson_high REAL NOT NULL,
  cp_low      REAL NOT NULL,
  cp_high     REAL NOT NULL,
  PRIMARY KEY (group_kind, group_name)
) WITHOUT ROWID;

-- ARC-Decode's gate, chosen on deploy sites (runtime/stats/arc_gate.h): per LTS threshold theta of
-- the grid, the on-policy arc runs that used it over their own prompts; `relaxed` counts relaxed
-- children with t_d != t_m, `relaxed_argmax` those with t_d = t_m (no JS shift, counted apart),
-- `misses` the former whose next-step JS exceeds the tolerance (manifest options.js_tolerance);
-- p_value is the exact binomial P(X <= misses) under risk = options.risk, `valid` 1 when it is at
-- most (1 - confidence) / grid size (Bonferroni: the family-wise Learn-then-Test).
CREATE TABLE arc_gate (
  theta          REAL NOT NULL,
  prompts        INTEGER NOT NULL CHECK (prompts >= 0),
  sites          INTEGER NOT NULL CHECK (sites >= 0),
  relaxed        INTEGER NOT NULL CHECK (relaxed >= 0),
  relaxed_argmax INTEGER NOT NULL CHECK (relaxed_argmax >= 0),
  misses         INTEGER NOT NULL CHECK (misses >= 0 AND misses <= relaxed),
  risk           REAL NOT NULL,
  risk_high      REAL NOT NULL,
  p_value        REAL NOT NULL,
  valid          INTEGER NOT NULL CHECK (valid IN (0, 1)),
  PRIMARY KEY (theta)
) WITHOUT ROWID;

-- specd calibrate sweep: one row per measured run of a method family's parameter grid (the
-- manifest's calibrations.sweep.<family> holds the grid, the bounds and the chosen run). Run 0 is
-- the base point (the options as given). Unlike the other tables these hold timings: a sweep
-- measures speed, so two sweeps never give equal rows here.
CREATE TABLE sweep_runs (
  family     TEXT NOT NULL,     -- the method family swept, e.g. 'pld'
  run_index  INTEGER NOT NULL CHECK (run_index >= 0),
  point      TEXT NOT NULL,     -- 'tokens=5 match=earliest'
  vals       TEXT NOT NULL,     -- JSON array: the point's value per grid axis, in grid order
  cost_curve TEXT NOT NULL,     -- JSON array of [n, ms]: the target's forward cost the run used
  wall_s     REAL NOT NULL,     -- the run's measuring time
  PRIMARY KEY (family, run_index)
) WITHOUT ROWID;

-- A sweep run's measurements against AR, per prompt category and 'overall' (ordinal keeps the
-- order: categories by name, 'overall' last). Means over prompts; speedup is Spec-Bench's mean
-- ratio of throughputs with its 95% half-width; NLL per generated token under the target; chrF
-- (0..100) of the method's output against AR's.
CREATE TABLE sweep_categories (
  family            TEXT NOT NULL,
  run_index         INTEGER NOT NULL,
  category          TEXT NOT NULL,
  ordinal           INTEGER NOT NULL CHECK (ordinal >= 0),
  prompts           INTEGER NOT NULL CHECK (prompts >= 0),
  new_tokens        INTEGER NOT NULL CHECK (new_tokens >= 0),
  equal_to_ar       INTEGER NOT NULL CHECK (equal_to_ar >= 0 AND equal_to_ar <= prompts),
  mat               REAL NOT NULL,
  acceptance        REAL NOT NULL,
  tokens_per_s      REAL NOT NULL,
  ar_tokens_per_s   REAL NOT NULL,
  speedup           REAL NOT NULL,
  speedup_ci95      REAL NOT NULL,
  decode_speedup    REAL NOT NULL,
  relaxed_per_token REAL NOT NULL,
  rescued_per_token REAL NOT NULL,
  nll_per_token     REAL NOT NULL,
  ar_nll_per_token  REAL NOT NULL,
  chrf_vs_ar        REAL NOT NULL,
  -- version 4: per-prompt mean and standard deviation of the NLL increase and of chrF vs AR
  nll_increase_mean REAL NOT NULL,
  nll_increase_sd   REAL NOT NULL,
  chrf_mean         REAL NOT NULL,
  chrf_sd           REAL NOT NULL,
  -- version 5: per-prompt mean and standard deviation of the expected TV per generated token
  tv_mean           REAL NOT NULL,
  tv_sd             REAL NOT NULL,
  PRIMARY KEY (family, run_index, category),
  FOREIGN KEY (family, run_index) REFERENCES sweep_runs (family, run_index)
) WITHOUT ROWID;

-- Constants the runtime deploys per policy, e.g. ('csd', 'lambda', 6, 'paper default').
CREATE TABLE thresholds (
  policy TEXT NOT NULL,
  name   TEXT NOT NULL,
  value  REAL NOT NULL,
  source TEXT NOT NULL,  -- where the value comes from: 'paper default', a sweep, a user
  PRIMARY KEY (policy, name)
) WITHOUT ROWID;

PRAGMA user_version = 5;
