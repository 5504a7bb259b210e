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
};

const std::vector<EmbeddedFile> &embeddedFiles();
// The text of the embedded file `name`; empty when there is none.
std::string embeddedFile(const std::string &name);

} // namespace dlc

#endif
