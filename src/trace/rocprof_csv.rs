//! rocprofv3 kernel trace CSV: `--output-format csv` (`*_kernel_trace.csv`) or `rocpd convert -f
//! csv` (same columns after a leading `Guid`).
//!
//! Columns are found by header name: ROCm 6.1, 6.2 and 6.3+ headers differ in what sits between
//! `Kernel_Name` and the timestamps, and quoted kernel names contain commas. Rows are not sorted
//! by time. A file whose last line has no newline was cut short while being written and is
//! refused rather than read as if complete.
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use super::kernels::{accumulate, Aggregate, Totals};
use super::phase::{PhaseWindows, PHASES};
use super::source::{Dispatch, KernelKey, KernelSource};
use super::TraceError;

const NAME_COLUMNS: [&str; 2] = ["Kernel_Name", "KernelName"];
const START_COLUMNS: [&str; 2] = ["Start_Timestamp", "BeginNs"];
const END_COLUMNS: [&str; 2] = ["End_Timestamp", "EndNs"];
const AGENT_COLUMNS: [&str; 2] = ["Agent_Id", "gpu-id"];
const STREAM_COLUMNS: [&str; 3] = ["Stream_Id", "Queue_Id", "queue-id"];

pub(crate) struct CsvTrace {
    path: PathBuf,
    flavour: &'static str,
    name: usize,
    start: usize,
    end: usize,
    /// Device and stream columns, when the CSV has them (they make a dispatch's lane).
    agent: Option<usize>,
    stream: Option<usize>,
    fields: usize,
    /// Kernel names by key, as the first start-ordered read numbered them.
    names: std::sync::OnceLock<Vec<String>>,
}

/// The number at the end of a field: rocprofv3 writes agents as `Agent 4`, streams as `1`.
fn trailing_int(raw: &[u8]) -> i64 {
    let t = raw.trim_ascii();
    let digits = t.iter().rev().take_while(|b| b.is_ascii_digit()).count();
    std::str::from_utf8(&t[t.len() - digits..]).ok().and_then(|s| s.parse().ok()).unwrap_or(0)
}

fn find(header: &[String], candidates: &[&str]) -> Option<usize> {
    header.iter().position(|h| candidates.contains(&h.as_str()))
}

/// What a CSV that is not a kernel trace is, judged by its header, for the refusal message.
fn what_else(header: &[String]) -> Option<&'static str> {
    let has = |c: &str| header.iter().any(|h| h == c);
    if has("Counter_Name") {
        Some("a rocprofv3 counter collection CSV (counter values per dispatch, no timestamps)")
    } else if has("Direction") || has("Source_Agent_Id") {
        Some("a rocprofv3 memory copy trace")
    } else if has("Domain") && has("Function") {
        Some("a rocprofv3 API trace (HIP/HSA calls on the host, not GPU kernels)")
    } else if has("Calls") && (has("TotalDurationNs") || has("Percentage")) {
        Some("a rocprofv3 --stats summary (totals only, no per-dispatch timestamps)")
    } else if has("Node_Id") && has("Agent_Type") {
        Some("a rocprofv3 agent_info.csv")
    } else {
        None
    }
}

/// 1-based number of the last line, counting a final line without newline.
fn line_count(path: &Path) -> std::io::Result<u64> {
    let mut r = BufReader::new(std::fs::File::open(path)?);
    let mut n = 0u64;
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            return Ok(n + 1);
        }
        n += buf.iter().filter(|&&b| b == b'\n').count() as u64;
        let len = buf.len();
        r.consume(len);
    }
}

impl CsvTrace {
    pub(crate) fn open(path: &Path, first_line: &str) -> Result<CsvTrace, TraceError> {
        let header: Vec<String> = csv::ReaderBuilder::new()
            .has_headers(false)
            .from_reader(first_line.as_bytes())
            .records()
            .next()
            .and_then(Result::ok)
            .map(|r| r.iter().map(|f| f.trim().to_string()).collect())
            .unwrap_or_default();
        let (Some(name), Some(start), Some(end)) =
            (find(&header, &NAME_COLUMNS), find(&header, &START_COLUMNS), find(&header, &END_COLUMNS))
        else {
            if let Some(what) = what_else(&header) {
                return Err(TraceError::NotKernelTrace { path: path.into(), what: what.into() });
            }
            return Err(TraceError::UnknownFormat {
                path: path.into(),
                what: format!(
                    "a CSV without Kernel_Name, Start_Timestamp and End_Timestamp columns (header: {:.80})",
                    first_line
                ),
            });
        };
        let io = |source| TraceError::Io { path: path.into(), source };
        let mut f = std::fs::File::open(path).map_err(io)?;
        f.seek(SeekFrom::End(-1)).map_err(io)?;
        let mut last = [0u8; 1];
        f.read_exact(&mut last).map_err(io)?;
        if last[0] != b'\n' {
            return Err(TraceError::TruncatedCsv { path: path.into(), line: line_count(path).map_err(io)? });
        }
        let has = |c: &str| header.iter().any(|h| h == c);
        let flavour = if has("Guid") {
            "rocprofv3 kernel trace CSV written by `rocpd convert`"
        } else if has("Kind") {
            "rocprofv3 kernel_trace.csv"
        } else {
            "rocprof kernel trace CSV"
        };
        Ok(CsvTrace {
            path: path.into(),
            flavour,
            name,
            start,
            end,
            agent: find(&header, &AGENT_COLUMNS),
            stream: find(&header, &STREAM_COLUMNS),
            fields: header.len(),
            names: Default::default(),
        })
    }

    /// Streams the data rows as (name, start, end, lane), checking each row's shape.
    fn for_each_row(&self, mut f: impl FnMut(&[u8], i64, i64, i64)) -> Result<(), TraceError> {
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(true)
            .flexible(true)
            .from_path(&self.path)
            .map_err(|e| TraceError::MalformedCsv { path: self.path.clone(), line: 1, detail: e.to_string() })?;
        let mut rec = csv::ByteRecord::new();
        loop {
            let more = reader.read_byte_record(&mut rec).map_err(|e| TraceError::MalformedCsv {
                path: self.path.clone(),
                line: e.position().map_or(0, |p| p.line()),
                detail: e.to_string(),
            })?;
            if !more {
                return Ok(());
            }
            let line = rec.position().map_or(0, |p| p.line());
            if rec.len() != self.fields {
                return Err(TraceError::MalformedCsv {
                    path: self.path.clone(),
                    line,
                    detail: format!("{} fields where the header has {}", rec.len(), self.fields),
                });
            }
            let int = |i: usize, column: &str| -> Result<i64, TraceError> {
                let raw = &rec[i];
                std::str::from_utf8(raw).ok().and_then(|s| s.trim().parse().ok()).ok_or_else(|| {
                    TraceError::MalformedCsv {
                        path: self.path.clone(),
                        line,
                        detail: format!("{column} `{}` is not an integer", String::from_utf8_lossy(raw)),
                    }
                })
            };
            let (start, end) = (int(self.start, "Start_Timestamp")?, int(self.end, "End_Timestamp")?);
            let field = |i: Option<usize>| i.map_or(0, |i| trailing_int(&rec[i]));
            let lane = (field(self.agent) << 32) + field(self.stream);
            f(&rec[self.name], start, end, lane);
        }
    }
}

impl KernelSource for CsvTrace {
    fn describe(&self) -> String {
        self.flavour.to_string()
    }

    fn aggregate(&self, windows: Option<&PhaseWindows>) -> Result<Aggregate, TraceError> {
        let mut by_name: HashMap<Vec<u8>, [Totals; PHASES]> = HashMap::new();
        self.for_each_row(|name, start, end, _| {
            // Look up by slice first so a known name costs no allocation.
            if let Some(acc) = by_name.get_mut(name) {
                let phase = windows.map_or(super::phase::Phase::Decode, |w| w.classify(start));
                acc[phase as usize].add(start, end);
            } else {
                accumulate(&mut by_name, name.to_vec(), start, end, windows);
            }
        })?;
        Ok(Aggregate::from_ids(by_name, |n| String::from_utf8_lossy(n).into_owned()))
    }

    fn graph_span(&self) -> Result<Option<(i64, i64)>, TraceError> {
        Ok(None)
    }

    /// Rows are not in time order, so this one collects the dispatches (32 bytes each) and
    /// sorts them. Keys number the names in order of first appearance in the file.
    fn for_each_by_start(&self, f: &mut dyn FnMut(Dispatch)) -> Result<(), TraceError> {
        let mut ids: HashMap<Vec<u8>, i64> = HashMap::new();
        let mut spans = Vec::new();
        self.for_each_row(|name, start, end, lane| {
            let id = match ids.get(name) {
                Some(&id) => id,
                None => {
                    let id = ids.len() as i64;
                    ids.insert(name.to_vec(), id);
                    id
                }
            };
            spans.push((start, end, id, lane));
        })?;
        let _ = self.names.set({
            let mut by_id: Vec<(i64, Vec<u8>)> = ids.into_iter().map(|(name, id)| (id, name)).collect();
            by_id.sort_unstable();
            by_id.into_iter().map(|(_, n)| String::from_utf8_lossy(&n).into_owned()).collect()
        });
        spans.sort_unstable();
        for (start, end, id, lane) in spans {
            f(Dispatch { start, end, key: KernelKey { set: 0, id }, lane });
        }
        Ok(())
    }

    /// The names [`Self::for_each_by_start`] numbered (the file has no name table of its own).
    fn key_names(&self, keys: &[KernelKey]) -> Result<HashMap<KernelKey, String>, TraceError> {
        if self.names.get().is_none() {
            self.for_each_by_start(&mut |_| {})?;
        }
        let names = self.names.get().expect("set by for_each_by_start");
        Ok(keys.iter().filter_map(|k| names.get(usize::try_from(k.id).ok()?).map(|n| (*k, n.clone()))).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::phase::Phase;
    use std::io::Write;

    fn write(text: &str) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(text.as_bytes()).unwrap();
        f
    }

    fn decode(t: &CsvTrace) -> Vec<(String, u64, u64)> {
        let agg = t.aggregate(None).unwrap();
        agg.kernels.iter().map(|k| (k.name.clone(), k.phase(Phase::Decode).calls, k.phase(Phase::Decode).ns)).collect()
    }

    #[test]
    fn rocm_6_2_header_and_rocpd_convert_header_read_by_name() {
        let v62 = "\"Kind\",\"Agent_Id\",\"Queue_Id\",\"Thread_Id\",\"Dispatch_Id\",\"Kernel_Id\",\"Kernel_Name\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\",\"Private_Segment_Size\",\"Group_Segment_Size\",\"Workgroup_Size_X\",\"Workgroup_Size_Y\",\"Workgroup_Size_Z\",\"Grid_Size_X\",\"Grid_Size_Y\",\"Grid_Size_Z\"\n\
            \"KERNEL_DISPATCH\",1,1,77,2,9,\"void rope_neox<true, false, float, float>(float const*, float*)\",2,2000,2600,0,0,256,1,1,4096,1,1\n\
            \"KERNEL_DISPATCH\",1,1,77,1,9,\"void rope_neox<true, false, float, float>(float const*, float*)\",1,1000,1500,0,0,256,1,1,4096,1,1\n";
        let f = write(v62);
        let first = v62.lines().next().unwrap();
        let t = CsvTrace::open(f.path(), first).unwrap();
        assert_eq!(t.describe(), "rocprofv3 kernel_trace.csv");
        assert_eq!(
            decode(&t),
            vec![("void rope_neox<true, false, float, float>(float const*, float*)".into(), 2, 1100)]
        );

        let conv = "\"Guid\",\"Kind\",\"Agent_Id\",\"Queue_Id\",\"Stream_Id\",\"Thread_Id\",\"Dispatch_Id\",\"Kernel_Id\",\"Kernel_Name\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\",\"LDS_Block_Size\",\"Scratch_Size\",\"VGPR_Count\",\"Accum_VGPR_Count\",\"SGPR_Count\",\"Workgroup_Size_X\",\"Workgroup_Size_Y\",\"Workgroup_Size_Z\",\"Grid_Size_X\",\"Grid_Size_Y\",\"Grid_Size_Z\"\n\
            \"0000ddb5-8903-7903-b269-cd8d3745bb8a\",\"KERNEL_DISPATCH\",\"GPU 0\",1,1,137,1,3,\"mul_mat_vec_q\",1,500,800,0,0,8,0,16,64,1,1,1024,1,1\n";
        let f = write(conv);
        let t = CsvTrace::open(f.path(), conv.lines().next().unwrap()).unwrap();
        assert!(t.describe().contains("rocpd convert"));
        assert_eq!(decode(&t), vec![("mul_mat_vec_q".into(), 1, 300)]);
    }

    /// Two kernels overlap on stream 1 (the later one waits), a third runs beside them on
    /// stream 2 of the same agent: lanes come from `Agent_Id` and `Stream_Id`.
    #[test]
    fn lanes_come_from_agent_and_stream() {
        let text =
            "\"Kind\",\"Agent_Id\",\"Queue_Id\",\"Stream_Id\",\"Kernel_Name\",\"Start_Timestamp\",\"End_Timestamp\"\n\
            \"KERNEL_DISPATCH\",\"Agent 4\",1,1,\"a\",1000,2000\n\
            \"KERNEL_DISPATCH\",\"Agent 4\",1,1,\"b\",1500,2100\n\
            \"KERNEL_DISPATCH\",\"Agent 4\",2,2,\"c\",1000,1200\n";
        let f = write(text);
        let t = CsvTrace::open(f.path(), text.lines().next().unwrap()).unwrap();
        let mut lanes = Vec::new();
        t.for_each_by_start(&mut |d| lanes.push((d.start, d.lane))).unwrap();
        lanes.sort();
        assert_eq!(lanes, [(1000, (4 << 32) + 1), (1000, (4 << 32) + 2), (1500, (4 << 32) + 1)]);
        let split = crate::trace::overlap::split(&t, None, None).unwrap();
        assert_eq!(split.busy_ns, 1100);
        // a: 1000..1200 shared with c (100), then alone on its lane to 2000 (800); b: 2000..2100.
        let ex = |n: &str| split.exclusive_ns[n];
        assert_eq!((ex("a"), ex("b"), ex("c")), (900.0, 100.0, 100.0));
    }

    #[test]
    fn a_bad_timestamp_names_its_line() {
        let text = "\"Kernel_Name\",\"Start_Timestamp\",\"End_Timestamp\"\n\"a\",1,2\n\"b\",x3,4\n";
        let f = write(text);
        let t = CsvTrace::open(f.path(), text.lines().next().unwrap()).unwrap();
        let e = t.aggregate(None).unwrap_err().to_string();
        assert!(e.contains("line 3") && e.contains("`x3` is not an integer"), "{e}");
    }
}
