#include "artifact/artifact_arrays.h"

#include <string>
#include <utility>
#include <vector>

#include "util/error.h"

namespace specd {
namespace {

constexpr const char* kRejections = "/csd/rejections";
constexpr const char* kSamTokens = "/sam_corpus/tokens";
constexpr const char* kSamOffsets = "/sam_corpus/offsets";
const char* const kRejectionColumns[] = {"prompt", "step", "depth", "draft_token", "target_token"};

std::string rejection_column(const char* name) { return std::string(kRejections) + "/" + name; }

constexpr const char* kArcWhitening = "/arc/whitening";
std::string arc_column(const char* name) { return std::string("/arc/samples/") + name; }

}  // namespace

void write_arc_arrays(Hdf5File& file, const ArcCalibration& arc) {
  std::vector<int32_t> prompt, step, depth, target_token, draft_token, held_out, deploy_site, relaxed;
  std::vector<int64_t> position;
  std::vector<float> root_entropy;
  std::vector<double> u_emb_raw, u_logit_raw, js, theta;
  for (const ArcSample& x : arc.samples) {
    prompt.push_back(x.prompt);
    step.push_back(x.step);
    depth.push_back(x.depth);
    position.push_back(x.position);
    target_token.push_back(x.target_token);
    draft_token.push_back(x.draft_token);
    root_entropy.push_back(x.root_entropy);
    u_emb_raw.push_back(x.u_emb_raw);
    u_logit_raw.push_back(x.u_logit_raw);
    js.push_back(x.js);
    held_out.push_back(x.held_out ? 1 : 0);
    deploy_site.push_back(x.deploy_site ? 1 : 0);
    relaxed.push_back(x.relaxed ? 1 : 0);
    theta.push_back(x.theta);
  }
  file.write(kArcWhitening, arc.whitening);
  file.write(arc_column("prompt"), prompt);
  file.write(arc_column("step"), step);
  file.write(arc_column("depth"), depth);
  file.write(arc_column("position"), position);
  file.write(arc_column("target_token"), target_token);
  file.write(arc_column("draft_token"), draft_token);
  file.write(arc_column("root_entropy"), root_entropy);
  file.write(arc_column("u_emb_raw"), u_emb_raw);
  file.write(arc_column("u_logit_raw"), u_logit_raw);
  file.write(arc_column("js"), js);
  file.write(arc_column("held_out"), held_out);
  file.write(arc_column("deploy_site"), deploy_site);
  file.write(arc_column("relaxed"), relaxed);
  file.write(arc_column("theta"), theta);
}

namespace {

}  // namespace

void write_artifact_arrays(const std::string& path, const Artifact& artifact) {
  Hdf5File file = Hdf5File::create(path);
  file.write_root_attribute("schema_version", kArtifactH5Version);
  if (artifact.csd) {
    const std::vector<CsdRejection>& rows = artifact.csd->rejections;
    std::vector<int32_t> columns[5];
    std::vector<float> gaps;
    for (const CsdRejection& r : rows) {
      columns[0].push_back(r.prompt);
      columns[1].push_back(r.step);
      columns[2].push_back(r.depth);
      columns[3].push_back(r.draft_token);
      columns[4].push_back(r.target_token);
      gaps.push_back(r.logit_gap);
    }
    for (int c = 0; c < 5; ++c) file.write(rejection_column(kRejectionColumns[c]), columns[c]);
    file.write(rejection_column("logit_gap"), gaps);
  }
  if (artifact.arc) write_arc_arrays(file, *artifact.arc);
  if (artifact.sam_corpus) {
    std::vector<int32_t> tokens;
    std::vector<int64_t> offsets{0};
    for (const std::vector<int32_t>& document : artifact.sam_corpus->documents) {
      tokens.insert(tokens.end(), document.begin(), document.end());
      offsets.push_back(static_cast<int64_t>(tokens.size()));
    }
    file.write(kSamTokens, tokens);
    file.write(kSamOffsets, offsets);
  }
  file.close();
}

Hdf5File open_artifact_arrays(const std::string& path) {
  Hdf5File file = Hdf5File::open_read(path);
  const int64_t version = file.read_root_attribute("schema_version");
  if (version < kOldestArtifactVersion || version > kArtifactH5Version)
    input_error(path, "schema version " + std::to_string(version) + ", this specd reads " + readable_versions(kArtifactH5Version));
  return file;
}

int64_t artifact_arrays_version(const Hdf5File& file) { return file.read_root_attribute("schema_version"); }

std::vector<std::string> unexpected_objects(const Hdf5File& file) {
  // Each group specd writes and the children it writes there; a group holding more links than
  // those of them present holds something else. Counted, not listed: see Hdf5File::link_count.
  std::vector<std::string> arc_samples;
  for (const char* column : {"prompt", "step", "depth", "position", "target_token", "draft_token", "root_entropy", "u_emb_raw",
                             "u_logit_raw", "js", "held_out", "deploy_site", "relaxed", "theta"})
    arc_samples.push_back(arc_column(column));
  std::vector<std::string> rejections;
  for (const char* column : kRejectionColumns) rejections.push_back(rejection_column(column));
  rejections.push_back(rejection_column("logit_gap"));
  const std::vector<std::pair<std::string, std::vector<std::string>>> layout{
      {"/", {"/csd", "/sam_corpus", "/arc"}},
      {"/csd", {kRejections}},
      {kRejections, rejections},
      {"/sam_corpus", {kSamTokens, kSamOffsets}},
      {"/arc", {kArcWhitening, "/arc/samples"}},
      {"/arc/samples", arc_samples},
  };
  std::vector<std::string> lines;
  for (const auto& [group, children] : layout) {
    if (group != "/" && !file.exists(group)) continue;
    int64_t known = 0;
    for (const std::string& child : children) known += file.exists(child);
    const int64_t links = file.link_count(group);
    if (links > known)
      lines.push_back(group + " holds " + std::to_string(links) + " objects, specd writes " + std::to_string(known) +
                      " of them: the others are another tool's, or the file is damaged");
  }
  return lines;
}

bool has_csd_rejections(const Hdf5File& file) { return file.exists("/csd"); }
bool has_sam_corpus(const Hdf5File& file) { return file.exists("/sam_corpus"); }
bool has_arc(const Hdf5File& file) { return file.exists("/arc"); }

std::vector<float> read_arc_whitening(const Hdf5File& file) { return file.read_float32(kArcWhitening); }

std::vector<ArcSample> read_arc_samples(const Hdf5File& file) {
  const std::vector<int32_t> prompt = file.read_int32(arc_column("prompt"));
  const size_t rows = prompt.size();
  auto checked = [&](auto values, const char* name) {
    if (values.size() != rows)
      input_error(file.path(), arc_column(name) + " has " + std::to_string(values.size()) + " rows, " + arc_column("prompt") + " " +
                                   std::to_string(rows));
    return values;
  };
  const auto step = checked(file.read_int32(arc_column("step")), "step");
  const auto depth = checked(file.read_int32(arc_column("depth")), "depth");
  const auto position = checked(file.read_int64(arc_column("position")), "position");
  const auto target_token = checked(file.read_int32(arc_column("target_token")), "target_token");
  const auto draft_token = checked(file.read_int32(arc_column("draft_token")), "draft_token");
  const auto root_entropy = checked(file.read_float32(arc_column("root_entropy")), "root_entropy");
  const auto u_emb_raw = checked(file.read_float64(arc_column("u_emb_raw")), "u_emb_raw");
  const auto u_logit_raw = checked(file.read_float64(arc_column("u_logit_raw")), "u_logit_raw");
  const auto js = checked(file.read_float64(arc_column("js")), "js");
  const auto held_out = checked(file.read_int32(arc_column("held_out")), "held_out");
  // Version 4 added the deploy sites' columns; older files hold candidate samples only.
  const bool sites = artifact_arrays_version(file) >= 4;
  const auto deploy_site = sites ? checked(file.read_int32(arc_column("deploy_site")), "deploy_site") : std::vector<int32_t>(rows, 0);
  const auto relaxed = sites ? checked(file.read_int32(arc_column("relaxed")), "relaxed") : std::vector<int32_t>(rows, 0);
  const auto theta = sites ? checked(file.read_float64(arc_column("theta")), "theta") : std::vector<double>(rows, 0.0);
  auto flag = [&](const std::vector<int32_t>& column, const char* name, size_t i) {
    if (column[i] != 0 && column[i] != 1)
      input_error(file.path(), arc_column(name) + " row " + std::to_string(i) + " is " + std::to_string(column[i]) + ", expected 0 or 1");
    return column[i] == 1;
  };
  std::vector<ArcSample> samples(rows);
  for (size_t i = 0; i < rows; ++i) {
    samples[i] = {prompt[i],      step[i],      depth[i],      position[i], target_token[i],
                  draft_token[i], root_entropy[i], u_emb_raw[i], u_logit_raw[i], js[i],
                  flag(held_out, "held_out", i), flag(deploy_site, "deploy_site", i), flag(relaxed, "relaxed", i), theta[i]};
  }
  return samples;
}

std::vector<CsdRejection> read_csd_rejections(const Hdf5File& file) {
  std::vector<int32_t> columns[5];
  for (int c = 0; c < 5; ++c) columns[c] = file.read_int32(rejection_column(kRejectionColumns[c]));
  const std::vector<float> gaps = file.read_float32(rejection_column("logit_gap"));
  const size_t rows = columns[0].size();
  auto check_length = [&](size_t length, const char* name) {
    if (length != rows)
      input_error(file.path(), rejection_column(name) + " has " + std::to_string(length) + " rows, " +
                                   rejection_column(kRejectionColumns[0]) + " " + std::to_string(rows));
  };
  for (int c = 1; c < 5; ++c) check_length(columns[c].size(), kRejectionColumns[c]);
  check_length(gaps.size(), "logit_gap");
  std::vector<CsdRejection> rejections(rows);
  for (size_t i = 0; i < rows; ++i)
    rejections[i] = {columns[0][i], columns[1][i], columns[2][i], columns[3][i], columns[4][i], gaps[i]};
  return rejections;
}

std::vector<std::vector<int32_t>> read_sam_documents(const Hdf5File& file) {
  const std::vector<int32_t> tokens = file.read_int32(kSamTokens);
  const std::vector<int64_t> offsets = file.read_int64(kSamOffsets);
  if (offsets.empty() || offsets.front() != 0) input_error(file.path(), std::string(kSamOffsets) + " must start with 0");
  if (offsets.back() != static_cast<int64_t>(tokens.size()))
    input_error(file.path(), std::string(kSamOffsets) + " ends at " + std::to_string(offsets.back()) + ", " + kSamTokens +
                                 " has " + std::to_string(tokens.size()) + " rows");
  std::vector<std::vector<int32_t>> documents;
  for (size_t i = 1; i < offsets.size(); ++i) {
    // Checked before the copy: a middle offset beyond the tokens is found by the next row only.
    if (offsets[i] < offsets[i - 1]) input_error(file.path(), std::string(kSamOffsets) + " decreases at row " + std::to_string(i));
    if (offsets[i] > offsets.back())
      input_error(file.path(), std::string(kSamOffsets) + " row " + std::to_string(i) + " is beyond the last offset");
    documents.emplace_back(tokens.begin() + offsets[i - 1], tokens.begin() + offsets[i]);
  }
  return documents;
}

}  // namespace specd
