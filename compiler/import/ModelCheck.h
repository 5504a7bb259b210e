// Structural checks of an untrusted ModelProto: everything the importer and the ONNX library
// (schema checks) rely on is verified here first, so a hostile file gets a clear error instead
// of reaching code that crashes on it.
#ifndef DLC_COMPILER_MODELCHECK_H
#define DLC_COMPILER_MODELCHECK_H

#include "onnx/onnx_pb.h"

#include <set>
#include <string>
#include <vector>

namespace dlc {

// "node 'conv1' (Conv)", or the first output's name when the node has none.
std::string nodeLabel(const onnx::NodeProto &node);
// "FLOAT", "INT64", ... for TensorProto data types.
std::string dtypeName(int32_t dtype);
// Data types newer than Debian's onnx.proto (1.12), numbered as in onnx 1.23.
enum NewerDtype : int32_t {
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  kUint4 = 21,
  kInt4 = 22,
  kFloat4E2M1 = 23,
  kFloat8E8M0 = 24,
  kUint2 = 25,
  kInt2 = 26,
};
// Bytes per element of a TensorProto data type in memory; 0 for strings and unknown types.
// The 4- and 2-bit types take one byte each: dlc unpacks them (see packedBits).
int64_t dtypeBytes(int32_t dtype);
// Bits per element of the types TensorProto packs several to a byte or int32 entry (4 or 2);
// 0 for the others.
int packedBits(int32_t dtype);
// "INTS", "FLOAT", ... for AttributeProto types.
std::string attributeTypeName(int type);

// Reads every external-data tensor (initializers and tensor attributes) into the model, from
// files inside the model's folder only, so nothing later touches the file system. Appends one
// error per tensor that cannot be loaded.
void loadExternalData(onnx::ModelProto &model, const std::string &modelPath,
                      std::vector<std::string> &errors);

// Graph structure (SSA names, topological order, defined inputs and outputs), tensor data
// sizes against dims, attribute types against the op schemas at `opset`, and the attribute
// ranges window arithmetic divides by. Appends every error found; changes nothing (the model is
// taken mutable only to share one tensor walk with loadExternalData).
void validateModel(onnx::ModelProto &model, int opset, std::vector<std::string> &errors);

struct ShapePins;

// A dim of a graph input that has no fixed value: a named (dim_param) or unknown dim.
struct SymbolicDim {
  std::string input;
  int index;
  std::string name; // "" when unnamed
};
std::vector<SymbolicDim> symbolicInputDims(const onnx::GraphProto &graph);
// The option that pins `dim`: "--dim batch=N", or "--input-shape x=Nx3x224x224" for an
// unnamed dim (the input's declared dims, N for every open one).
std::string pinningOption(const onnx::GraphProto &graph, const SymbolicDim &dim);

// Makes each optional graph input present (an input of its element type) or, when --absent
// names it, empty (an Optional node without input, placed first). Appends an error for an
// --absent that names no optional input.
void resolveOptionalInputs(onnx::ModelProto &model, const ShapePins &pins,
                           std::vector<std::string> &errors);

// Replaces each sequence input named by --sequence with one tensor input per element,
// NAME[0], NAME[1], ..., of the given shapes, gathered into NAME by a SequenceConstruct (a
// SequenceEmpty for an empty one) placed first; the importer then sees a sequence the graph
// builds. Appends an error for a pin that names no sequence input, a name already taken, or
// an element shape that contradicts the declared one.
void expandSequenceInputs(onnx::ModelProto &model, const ShapePins &pins,
                          std::vector<std::string> &errors);

// Replaces each input named by --input-value with a Constant node of that name, placed first,
// holding the values in the input's element type and shape (its declared one, or --input-shape's;
// a rank-0 or rank-1 input takes its dims from the number of values). Appends an error for a
// pin that names no tensor input, a value that does not parse as the input's type, or a value
// count that does not fill the shape.
void pinInputValues(onnx::ModelProto &model, const ShapePins &pins,
                    std::vector<std::string> &errors);

// Gives the graph inputs (and outputs sharing their dim names) the values of --dim and
// --input-shape, so the importer sees static shapes. Appends an error for a pin that names
// nothing, contradicts a fixed dim, or has the wrong rank, and for every input dim still open.
void pinShapes(onnx::ModelProto &model, const ShapePins &pins, std::vector<std::string> &errors);

// Shared with the pinning options (Pins.cpp): a dim with no value (symbolic, or negative as
// some exporters write "unknown"); the graph inputs that are not initializers; names for an
// error message ("none" for none).
bool isOpen(const onnx::TensorShapeProto::Dimension &dim);
std::vector<onnx::ValueInfoProto *> dataInputs(onnx::GraphProto &graph);
std::string joined(const std::vector<std::string> &names);

// The names a graph defines itself: its inputs, initializers and node outputs.
std::set<std::string> definedNames(const onnx::GraphProto &graph);
// The names a node's subgraphs (If branches, Loop and Scan bodies, nested ones included) read
// from the graphs around them: inputs of the node that ONNX leaves implicit.
std::vector<std::string> implicitInputs(const onnx::NodeProto &node);

// Drops the nodes no graph output depends on: dlc never runs them, so neither the importer
// nor anything after it needs to see them.
void removeDeadNodes(onnx::GraphProto &graph);

} // namespace dlc

#endif
