// Property tests of memory planning over random DAGs: every plan the pipeline produces must
// (1) pass the plan verifier, (2) survive an independent simulation in which every write
// stamps its bytes with the writer's identity and every read checks the stamps, and (3) stay
// within a stated factor of the live-bytes lower bound. Randomly corrupted plans that the
// simulation proves unsafe must all be rejected by the verifier.
#include "compiler/Pipeline.h"
#include "dialects/DlcDialect.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"

#include <catch2/catch.hpp>

#include <map>
#include <random>

using namespace mlir;

namespace {

constexpr int kCell = 4; // simulate memory in float-sized cells

RankedTensorType f32(ArrayRef<int64_t> shape, MLIRContext *ctx) {
  return RankedTensorType::get(shape, Float32Type::get(ctx));
}

// A random DAG of unary ops, same-shape adds, reshape views, channel concats and reductions
// over [1, c, 8] tensors, with several graph outputs.
OwningOpRef<ModuleOp> randomGraph(MLIRContext &ctx, std::mt19937 &rng) {
  OpBuilder b(&ctx);
  Location loc = b.getUnknownLoc();
  auto module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module.getBody());
  int numInputs = 1 + rng() % 2;
  SmallVector<Type> inputTypes;
  for (int i = 0; i < numInputs; ++i)
    inputTypes.push_back(f32({1, int64_t(1 + rng() % 4), 8}, &ctx));
  auto func = b.create<func::FuncOp>(loc, "forward", b.getFunctionType(inputTypes, {}));
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToEnd(entry);
  std::vector<Value> pool(entry->args_begin(), entry->args_end());
  auto pick = [&]() { return pool[rng() % pool.size()]; };
  auto shapeOf = [](Value v) { return cast<RankedTensorType>(v.getType()).getShape(); };
  int numOps = 5 + rng() % 40;
  for (int i = 0; i < numOps; ++i) {
    Value x = pick();
    auto shape = shapeOf(x);
    Value result;
    switch (rng() % 7) {
    case 0: result = b.create<dlc::ExpOp>(loc, x.getType(), x); break;
    case 1: result = b.create<dlc::ReluOp>(loc, x.getType(), x); break;
    case 2: { // add with another value of the same shape, else with itself
      Value y = x;
      for (int tries = 0; tries < 8; ++tries)
        if (Value c = pick(); c.getType() == x.getType())
          y = c;
      result = b.create<dlc::AddOp>(loc, x.getType(), x, y);
      break;
    }
    case 3: // a view with another shape, sometimes a chain back
      result = b.create<dlc::ReshapeOp>(loc, f32({1, 8, shape[1] * shape[2] / 8}, &ctx), x);
      if (rng() % 2)
        result = b.create<dlc::ReshapeOp>(loc, x.getType(), result);
      break;
    case 4: { // concat of 2-4 values with matching trailing dims
      SmallVector<Value> inputs{x};
      int64_t channels = shape[1];
      for (int n = 1 + rng() % 3; n > 0; --n)
        if (Value c = pick(); shapeOf(c).size() == 3 && shapeOf(c)[2] == shape[2] &&
                              shapeOf(c)[0] == 1) {
          inputs.push_back(c);
          channels += shapeOf(c)[1];
        }
      result = b.create<dlc::ConcatOp>(loc, f32({1, channels, shape[2]}, &ctx), inputs, 1);
      break;
    }
    case 5:
      result = b.create<dlc::ReduceSumOp>(loc, f32({1, shape[1], 1}, &ctx), x,
                                          b.getDenseI64ArrayAttr({2}));
      break;
    default: result = b.create<dlc::TanhOp>(loc, x.getType(), x); break;
    }
    // The pool stays in [1, c, 8] form; other results are left unused (dead values).
    if (shapeOf(result)[2] == 8)
      pool.push_back(result);
  }
  SmallVector<Value> outputs;
  for (int n = 1 + rng() % 3; n > 0; --n)
    outputs.push_back(pool[numInputs + rng() % (pool.size() - numInputs)]);
  b.create<func::ReturnOp>(loc, outputs);
  SmallVector<Type> resultTypes;
  for (Value v : outputs)
    resultTypes.push_back(v.getType());
  func.setType(b.getFunctionType(inputTypes, resultTypes));
  return module;
}

int64_t bytesOf(Value v) { return cast<RankedTensorType>(v.getType()).getNumElements() * 4; }

// Where a value's bytes are: memory kind ("a"rena, "o"utput n, "i"nput n) and offset.
struct Place {
  std::string memory;
  int64_t offset;
};

// Independent of the verifier: executes the plan on stamped memory. Returns "" when every
// read sees exactly the data its value should hold, else what went wrong.
std::string simulate(func::FuncOp func) {
  std::map<std::string, std::vector<int64_t>> memory; // cell -> stamp
  llvm::DenseMap<Value, std::vector<int64_t>> expected; // per-cell stamps a value must see
  llvm::DenseMap<Value, Place> place;
  int64_t stamp = 0;
  auto cells = [&](const Place &p, int64_t bytes) -> std::vector<int64_t> * {
    auto &m = memory[p.memory];
    size_t need = (p.offset + bytes) / kCell;
    if (m.size() < need)
      m.resize(need, -1);
    return &m;
  };
  auto check = [&](Value v) -> bool {
    Place p = place[v];
    auto *m = cells(p, bytesOf(v));
    std::vector<int64_t> want = expected[v];
    for (size_t i = 0; i < want.size(); ++i)
      if ((*m)[p.offset / kCell + i] != want[i])
        return false;
    return true;
  };
  Block &body = func.getBody().front();
  for (BlockArgument arg : body.getArguments()) {
    Place at{"i" + std::to_string(arg.getArgNumber()), 0};
    place[arg] = at;
    expected[arg] = std::vector<int64_t>(bytesOf(arg) / kCell, ++stamp);
    auto *m = cells(at, bytesOf(arg));
    std::fill(m->begin(), m->end(), stamp);
  }
  for (Operation &op : body) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (Value v : ret.getOperands())
        if (!check(v))
          return "a graph output was overwritten before the end";
      continue;
    }
    for (Value operand : op.getOperands())
      if (!check(operand))
        return "an operand of " + op.getName().getStringRef().str() + " was overwritten";
    Value result = op.getResult(0);
    // Copies first: inserting into a DenseMap invalidates references into it.
    if (op.hasAttr(dlc::kViewAttr)) {
      Place source = place[op.getOperand(0)];
      std::vector<int64_t> contents = expected[op.getOperand(0)];
      place[result] = source;
      expected[result] = std::move(contents);
      continue;
    }
    if (auto offset = op.getAttrOfType<IntegerAttr>(dlc::kArenaOffsetAttr))
      place[result] = {"a", offset.getInt()};
    else
      place[result] = {"o" + std::to_string(op.getAttrOfType<IntegerAttr>(dlc::kOutputAttr)
                                                .getInt()),
                       op.getAttrOfType<IntegerAttr>(dlc::kOutputOffsetAttr).getInt()};
    if (op.hasAttr(dlc::kElidedAttr)) {
      std::vector<int64_t> contents; // the inputs already are the result's slices
      for (Value in : op.getOperands())
        contents.insert(contents.end(), expected[in].begin(), expected[in].end());
      expected[result] = std::move(contents);
      if (!check(result))
        return "an elided concat's inputs are not in its slices";
      continue;
    }
    expected[result] = std::vector<int64_t>(bytesOf(result) / kCell, ++stamp);
    Place at = place[result];
    auto *m = cells(at, bytesOf(result));
    std::fill(m->begin() + at.offset / kCell, m->begin() + (at.offset + bytesOf(result)) / kCell,
              stamp);
  }
  return "";
}

LogicalResult runPasses(ModuleOp module, bool plan) {
  PassManager pm(module.getContext());
  if (plan) {
    pm.addNestedPass<func::FuncOp>(dlc::createInplaceLegalization());
    pm.addNestedPass<func::FuncOp>(dlc::createBufferPlanning());
  }
  pm.addNestedPass<func::FuncOp>(dlc::createPlanVerification());
  return pm.run(module);
}

} // namespace

TEST_CASE("planned memory is verified, simulates correctly and is near the lower bound") {
  DialectRegistry registry;
  dlc::registerAll(registry);
  MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  std::string lastError;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    lastError = d.str();
    return success();
  });
  std::mt19937 rng(12345);
  int graphs = 2000, elided = 0, inplace = 0, views = 0, badPlans = 0;
  double worstRatio = 1.0;
  for (int g = 0; g < graphs; ++g) {
    auto module = randomGraph(ctx, rng);
    INFO("graph " << g << ": " << lastError);
    REQUIRE(succeeded(mlir::verify(*module)));
    REQUIRE(succeeded(runPasses(*module, /*plan=*/true)));
    auto func = module->lookupSymbol<func::FuncOp>("forward");
    REQUIRE(simulate(func) == "");
    int64_t arena = func->getAttrOfType<IntegerAttr>(dlc::kArenaBytesAttr).getInt();
    int64_t bound = func->getAttrOfType<IntegerAttr>(dlc::kLowerBoundAttr).getInt();
    CHECK(arena >= bound);
    if (bound)
      worstRatio = std::max(worstRatio, double(arena) / bound);
    func.walk([&](Operation *op) {
      elided += op->hasAttr(dlc::kElidedAttr);
      inplace += op->hasAttr(dlc::kInPlaceAttr);
      views += op->hasAttr(dlc::kViewAttr);
    });

    // Corrupt one arena offset; whenever the simulation shows the result is wrong, the
    // verifier must refuse the plan.
    SmallVector<Operation *> placed;
    func.walk([&](Operation *op) {
      if (op->hasAttr(dlc::kArenaOffsetAttr))
        placed.push_back(op);
    });
    if (placed.size() < 2)
      continue;
    Operation *victim = placed[rng() % placed.size()];
    Operation *other = placed[rng() % placed.size()];
    victim->setAttr(dlc::kArenaOffsetAttr, other->getAttr(dlc::kArenaOffsetAttr));
    if (simulate(func) != "") {
      ++badPlans;
      INFO("corrupted graph " << g);
      CHECK(failed(runPasses(*module, /*plan=*/false)));
    }
  }
  // The stated bound: best-fit over several orderings stays within 1.25x of the peak of
  // simultaneously live bytes on these graphs.
  CHECK(worstRatio <= 1.25);
  // The generator really exercises the features, and the fuzzing really found bad plans.
  CHECK(elided > 50);
  CHECK(inplace > 500);
  CHECK(views > 500);
  CHECK(badPlans > 200);
  WARN("worst arena/lower bound " << worstRatio << "; elided " << elided << ", in-place "
                                  << inplace << ", views " << views << ", bad plans rejected "
                                  << badPlans);
}
