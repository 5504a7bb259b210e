// Files built into the dlc binary (codegen templates and runtime sources), so an installed
// dlc needs nothing beside itself.
#ifndef DLC_COMPILER_EMBEDDED_H
#define DLC_COMPILER_EMBEDDED_H

#include <string>
#include <vector>

namespace dlc {

struct EmbeddedFile {
  const char *name; // e.g. "codegen_templates/model.h.tpl", "runtime/conv.cpp"
  const char *text;

  // The CPU runtime, which every model links (runtime/, not runtime/cuda/).
  bool isCpuRuntime() const { return folderIs("runtime/"); }
  // The CUDA runtime, shipped as source beside CUDA models (runtime/cuda/).
  bool isCudaRuntime() const { return folderIs("runtime/cuda/"); }

private:
  bool folderIs(const std::string &folder) const {
    std::string path(name);
    return path.compare(0, folder.size(), folder) == 0 &&
           path.find('/', folder.size()) == std::string::npos;
  }
};

const std::vector<EmbeddedFile> &embeddedFiles();
// The text of the embedded file `name`; empty when there is none.
std::string embeddedFile(const std::string &name);

} // namespace dlc

#endif
