-- specd calibration artifact, calibration.sqlite, schema version 1 (PRAGMA user_version).
-- The tables of one model pair's artifact (schemas/README.md): the prompts each calibration ran,
-- CSD's correction memory, and the thresholds the runtime deploys. The writer inserts rows in
-- primary-key order in one transaction, so equal contents give equal table dumps.
-- Compiled in at build time (runtime/CMakeLists.txt); a change that existing readers cannot read
-- needs a new version (see the upgrade rule in schemas/README.md).

CREATE TABLE prompts (
  policy        TEXT NOT NULL,     -- the calibration that ran the prompt: csd, sam_corpus
  prompt_index  INTEGER NOT NULL,  -- index of the prompt in the prompts file, from 0
  prompt_id     TEXT NOT NULL,     -- the prompt's id in that file
  category      TEXT NOT NULL,
  prompt_tokens INTEGER NOT NULL,
  new_tokens    INTEGER NOT NULL,
  steps         INTEGER NOT NULL,  -- decoding steps (speculative steps for csd)
  drafted       INTEGER NOT NULL,  -- drafted tokens verified
  accepted      INTEGER NOT NULL,  -- drafted tokens accepted
  rejections    INTEGER NOT NULL,  -- rejection events (rows of /csd/rejections for this prompt)
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

-- Constants the runtime deploys per policy, e.g. ('csd', 'lambda', 6, 'paper default').
CREATE TABLE thresholds (
  policy TEXT NOT NULL,
  name   TEXT NOT NULL,
  value  REAL NOT NULL,
  source TEXT NOT NULL,  -- where the value comes from: 'paper default', a sweep, a user
  PRIMARY KEY (policy, name)
) WITHOUT ROWID;

PRAGMA user_version = 1;
