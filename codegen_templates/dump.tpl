Fragments of model.h.tpl and model.cpp.tpl for models compiled with --dump (the same keys as
profile.tpl; a model has one or the other). Each section runs from its "//@@ KEY" line to the
next and replaces @KEY@ in those templates.
//@@ INSTRUMENT_MACROS
// Dumping (compiled with --dump): runs hand every op's results to a dump function.
#define @UPPER_NAME@_DUMPED 1
//@@ INSTRUMENT_C_API

// ---- Dumping (compiled with --dump) ----
// From the next run on, `fn(user, ...)` gets each op's results as the op finishes, in the
// order the ops run (dlc_dump_fn, dlc_runtime.h); a null fn stops it.
void @NAME@_set_dump(@NAME@_model *model, dlc_dump_fn fn, void *user);
//@@ INSTRUMENT_METHODS

  // Dumping (compiled with --dump); see @NAME@_set_dump.
  void setDump(dlc_dump_fn fn, void *user) { dump_ = {fn, user}; }
//@@ INSTRUMENT_MEMBERS

  dlc_dump dump_ = {};
//@@ INSTRUMENT_PARAM
, const dlc_dump *dump
//@@ INSTRUMENT_ARG
, &dump_
//@@ INSTRUMENT_TABLE
//@@ INSTRUMENT_INIT
//@@ INSTRUMENT_DEFINITIONS

extern "C" void @NAME@_set_dump(@NAME@_model *model, dlc_dump_fn fn, void *user) {
  if (model)
    model->impl.setDump(fn, user);
}
