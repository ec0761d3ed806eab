//! The history database's schema, one migration per version (docs/methodology.md §15). A
//! migration, once released, is never edited: a later version adds a migration after it, so a
//! database made by any earlier abprof opens in this one (src/history/migrate.rs).

/// `PRAGMA application_id` of an abprof history ("abpH"): another program's SQLite file is refused
/// rather than written into.
pub(crate) const APPLICATION_ID: i32 = 0x6162_7048;

/// The SQL that takes a database from version `i` to `i + 1`.
pub(crate) const MIGRATIONS: &[&str] = &[V1, V2, V3, V4, V5];

/// The version this abprof writes.
pub(crate) const LATEST: u32 = MIGRATIONS.len() as u32;

/// Studies, their variants with fingerprints, every sample with its rejections, the verdicts.
const V1: &str = r#"
CREATE TABLE studies (
    id                  INTEGER PRIMARY KEY,
    -- folder + plan + start: a study imported twice is recognized by it
    identity            TEXT NOT NULL UNIQUE,
    kind                TEXT NOT NULL,
    folder              TEXT NOT NULL,
    name                TEXT,
    aa                  INTEGER NOT NULL,
    started_at          TEXT,
    started_unix        REAL,
    recorded_at         TEXT NOT NULL,
    abprof              TEXT,
    host                TEXT,
    host_facts          TEXT,
    gpu                 TEXT,
    model_path          TEXT,
    model_sha256        TEXT,
    workload            TEXT,
    output_tokens       INTEGER,
    prompt_tokens       INTEGER,
    server_args         TEXT NOT NULL,
    pure_decode         INTEGER NOT NULL,
    ignore_eos          INTEGER NOT NULL,
    samples_per_variant INTEGER,
    missing             INTEGER NOT NULL,
    isolation_restored  INTEGER,
    outcome             TEXT
);
CREATE TABLE variants (
    id               INTEGER PRIMARY KEY,
    study_id         INTEGER NOT NULL REFERENCES studies(id) ON DELETE CASCADE,
    position         INTEGER NOT NULL,
    label            TEXT NOT NULL,
    spec             TEXT NOT NULL,
    binary_path      TEXT,
    binary_sha256    TEXT,
    version          TEXT,
    commit_sha       TEXT,
    artifact_version TEXT,
    model_path       TEXT,
    model_sha256     TEXT,
    kv               TEXT,
    own_args         TEXT NOT NULL,
    argv             TEXT NOT NULL,
    env              TEXT NOT NULL,
    expect           TEXT,
    planned          INTEGER NOT NULL,
    accepted         INTEGER NOT NULL,
    UNIQUE (study_id, position)
);
CREATE INDEX variants_by_label ON variants(label);
CREATE TABLE samples (
    id               INTEGER PRIMARY KEY,
    variant_id       INTEGER NOT NULL REFERENCES variants(id) ON DELETE CASCADE,
    idx              INTEGER NOT NULL,
    dir              TEXT NOT NULL,
    accepted         INTEGER NOT NULL,
    decode_tps       REAL,
    prefill_tps      REAL,
    strict_tps       REAL,
    ttft_ms          REAL,
    prompt_tokens    INTEGER,
    output_tokens    INTEGER,
    draft_acceptance REAL,
    wall_ms          REAL
);
CREATE INDEX samples_by_variant ON samples(variant_id);
CREATE TABLE rejections (
    sample_id INTEGER NOT NULL REFERENCES samples(id) ON DELETE CASCADE,
    rule      TEXT NOT NULL,
    reason    TEXT NOT NULL
);
CREATE TABLE verdicts (
    variant_id INTEGER NOT NULL REFERENCES variants(id) ON DELETE CASCADE,
    metric     TEXT NOT NULL,
    median     REAL,
    mean       REAL,
    change_pct REAL,
    ci_lo_pct  REAL,
    ci_hi_pct  REAL,
    confidence REAL,
    resamples  INTEGER,
    seed       INTEGER,
    verdict    TEXT,
    PRIMARY KEY (variant_id, metric)
);
"#;

/// Per-phase telemetry and energy, and kernel-category ms/token of traced variants.
const V2: &str = r#"
CREATE TABLE phases (
    variant_id      INTEGER NOT NULL REFERENCES variants(id) ON DELETE CASCADE,
    phase           TEXT NOT NULL,
    samples         INTEGER NOT NULL,
    mean_power_w    REAL,
    mean_busy_pct   REAL,
    mean_cpu_pct    REAL,
    peak_temp_c     REAL,
    gfx_clock_mhz   REAL,
    energy_j        REAL,
    j_per_token     REAL,
    energy_from     TEXT,
    PRIMARY KEY (variant_id, phase)
);
CREATE TABLE kernel_categories (
    variant_id   INTEGER NOT NULL REFERENCES variants(id) ON DELETE CASCADE,
    category     TEXT NOT NULL,
    ms_per_token REAL NOT NULL,
    PRIMARY KEY (variant_id, category)
);
"#;

/// Each sample's energy and power metrics (docs/methodology.md §9.6), by the metric's name: the
/// values `history --regressions` judges their moves on, as it does the speed columns of `samples`.
const V3: &str = r#"
CREATE TABLE sample_energy (
    sample_id INTEGER NOT NULL REFERENCES samples(id) ON DELETE CASCADE,
    metric    TEXT NOT NULL,
    value     REAL NOT NULL,
    PRIMARY KEY (sample_id, metric)
);
"#;

/// The study's minimum effect of interest (`--mei`, docs/methodology.md §8), in %: a stored
/// `same` verdict means the change's interval lies inside ± it. NULL: the study had none (or
/// was recorded before this version).
const V4: &str = r#"
ALTER TABLE studies ADD COLUMN mei_pct REAL;
"#;

/// llama-bench's results, imported beside the studies as runs of their own kind (docs/methodology.md
/// §15 "llama-bench results"): one row per test, never mixed into a study's statistics.
const V5: &str = r#"
CREATE TABLE llama_bench_results (
    id                  INTEGER PRIMARY KEY,
    -- sha256 of the row as imported: a file imported twice adds nothing
    identity            TEXT NOT NULL UNIQUE,
    imported_at         TEXT NOT NULL,
    source              TEXT NOT NULL,
    format              TEXT NOT NULL,
    host                TEXT,
    build_commit        TEXT NOT NULL,
    build_number        INTEGER,
    model_filename      TEXT NOT NULL,
    model_type          TEXT,
    backends            TEXT,
    gpu_info            TEXT,
    test                TEXT NOT NULL,
    n_prompt            INTEGER NOT NULL,
    n_gen               INTEGER NOT NULL,
    n_depth             INTEGER NOT NULL,
    avg_ts              REAL NOT NULL,
    stddev_ts           REAL NOT NULL,
    samples_ts          TEXT,
    test_time           TEXT,
    settings            TEXT NOT NULL
);
"#;
