Fragments of model.h.tpl and model.cpp.tpl for models compiled with --profile. Each section
runs from its "//@@ KEY" line to the next and replaces @KEY@ in those templates.
//@@ INSTRUMENT_MACROS
// Profiling (compiled with --profile): every run times each of the @OP_COUNT@ ops.
#define @UPPER_NAME@_PROFILED 1
#define @UPPER_NAME@_NUM_OPS @OP_COUNT@
//@@ INSTRUMENT_C_API

// ---- Profiling (compiled with --profile) ----
// The ops in the order they run, each with its time in the last run; returns their number.
// The entries live as long as the model and change with each run.
int @NAME@_profile(const @NAME@_model *model, const dlc_op_profile **ops);
//@@ INSTRUMENT_METHODS

  // Profiling (compiled with --profile); see @NAME@_profile.
  int profile(const dlc_op_profile **ops) const {
    *ops = profile_;
    return @OP_COUNT@;
  }
//@@ INSTRUMENT_MEMBERS

  dlc_op_profile profile_[@OP_COUNT@] = {};
//@@ INSTRUMENT_PARAM
, dlc_op_profile *profile
//@@ INSTRUMENT_ARG
, profile_
//@@ INSTRUMENT_TABLE
// What each op computes (node, op, shapes, FLOPs, bytes); the times are filled by runs.
const dlc_op_profile kOps[] = {@OP_TABLE@};

//@@ INSTRUMENT_INIT

  for (int i = 0; i < @OP_COUNT@; ++i)
    profile_[i] = kOps[i];
//@@ INSTRUMENT_DEFINITIONS

extern "C" int @NAME@_profile(const @NAME@_model *model, const dlc_op_profile **ops) {
  return model && ops ? model->impl.profile(ops) : 0;
}
