-- specd per-step traces, schema version 5 (PRAGMA user_version).
-- One run = one method over a set of requests; one step = one speculative draft/verify/accept
-- cycle. A request's row and all its steps are written in one transaction, so a run that dies
-- leaves only complete requests behind. Times are milliseconds; entropies are nats.
-- The runtime creates new files from this text (compiled in at build time, see
-- runtime/CMakeLists.txt); a change that existing readers cannot read needs a new version.

CREATE TABLE runs (
  id            INTEGER PRIMARY KEY,
  created_at    TEXT NOT NULL,   -- UTC, ISO 8601 (2025-01-31T12:00:00Z)
  finished_at   TEXT,            -- NULL while running or when the run died
  command_line  TEXT NOT NULL,
  target_model  TEXT NOT NULL,   -- model directory
  draft_model   TEXT,            -- NULL when the method drafts without a model
  method        TEXT NOT NULL,   -- e.g. ar, sd, sd-tree, pld, sam
  options_json  TEXT NOT NULL,   -- the method's and sampling options as a JSON object
  specd_version TEXT NOT NULL,
  -- version 3
  specd_commit  TEXT,            -- git commit specd was built from ("unknown" outside git)
  -- version 5
  machine       TEXT             -- JSON: the machine the run's times are from (CPU, its kernels'
                                 -- features, last-level cache, threads); NULL when unknown
);

CREATE TABLE requests (
  run_id        INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  request       INTEGER NOT NULL,  -- index within the run, from 0
  workload      TEXT NOT NULL,     -- workload item id
  category      TEXT NOT NULL,
  prompt_tokens INTEGER NOT NULL,
  new_tokens    INTEGER NOT NULL,
  wall_ms       REAL NOT NULL,
  output_hash   TEXT NOT NULL,     -- FNV-1a 64 of the output token ids (16 hex digits), to compare runs
  output_tokens TEXT NOT NULL,     -- the output token ids as a JSON array
  -- version 3
  measurement   TEXT,              -- JSON: what the writer measured of this request beyond the above
                                   -- (specd bench: its per-request tally, so --resume can go on); NULL if none
  PRIMARY KEY (run_id, request)
) WITHOUT ROWID;

CREATE TABLE steps (
  run_id           INTEGER NOT NULL,
  request          INTEGER NOT NULL,
  step             INTEGER NOT NULL,  -- from 0 within the request
  drafter          TEXT NOT NULL,     -- the drafter that proposed this step's tree
  draft_size       INTEGER NOT NULL,  -- drafted nodes, the root excluded
  accepted_length  INTEGER NOT NULL,  -- drafted tokens accepted (the step commits this + 1)
  accepted_sources TEXT NOT NULL,     -- one letter per accepted drafted token, in path order:
                                      -- M model, R retrieval, B branch, S successor ("R,R,M")
  root_entropy     REAL,              -- target entropy at the root, softmax at T = 1; NULL if unknown
  draft_ms         REAL NOT NULL,
  verify_ms        REAL NOT NULL,
  accept_ms        REAL NOT NULL,
  lossless         INTEGER NOT NULL CHECK (lossless IN (0, 1)),
  -- version 2: the pruner stage and lossy verdicts
  pruned            INTEGER NOT NULL DEFAULT 0,  -- drafted nodes a pruner removed before verification
  rescued           INTEGER NOT NULL DEFAULT 0,  -- accepted tokens the lossless test rejected, rescued (CSD)
  relaxed           INTEGER NOT NULL DEFAULT 0,  -- ... accepted by a relaxed test (ReSpec, ARC)
  accepted_verdicts TEXT NOT NULL DEFAULT '',    -- one letter per accepted drafted token when any was
                                                 -- rescued or relaxed: A accepted, C rescued, X relaxed
  decision_scores   TEXT,                        -- JSON array, the score that decided each rescued or
                                                 -- relaxed token (CSD: logit gap z(draft) - z(target))
  -- version 4: what the pruner and the acceptor measured
  detail            TEXT,                        -- JSON object, NULL when none: "pruning" (pruner,
                                                 -- root_entropy_normalized, drafted, kept, pruned_fraction),
                                                 -- "acceptance" (ARC: "lts", one object per evaluated node:
                                                 -- node, depth, token, target, u_emb, u_logit, lts, relaxed;
                                                 -- CSD: "rescues", one object per rescued token in path
                                                 -- order: draft, target (t*, the token the lossless rule
                                                 -- emitted instead), gap = z(draft) - z(target) in nats)
  PRIMARY KEY (run_id, request, step),
  FOREIGN KEY (run_id, request) REFERENCES requests(run_id, request) ON DELETE CASCADE
) WITHOUT ROWID;

PRAGMA user_version = 5;
