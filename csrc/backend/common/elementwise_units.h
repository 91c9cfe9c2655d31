// Which compile unit holds an elementwise op's kernels, on every backend: the op x
// dtype instantiations are spread over several translation units so that none is
// slow to compile (backend/cpu/binary_*.cpp, backend/cuda/binary_*.cu, ...).
#pragma once

#include "ops/elementwise_table.h"

namespace lucid::backend {

// (Units of at most about five ops x eleven dtypes: the binary units above that took
// 33-39 s each to compile in a two-job build, over the 30 s a unit may take.)
enum class Unit { Arith, Extremum, Division, Equality, Logical, Order, Math, Logs, Bitwise, Basic, Trig, Rounding,
                  Predicate, Special, Polynomial, Bessel, Activation };

constexpr Unit binary_unit(ops::BinaryOp op) {
  using B = ops::BinaryOp;
  switch (op) {
    case B::Pow: case B::Fmax: case B::Fmin: case B::Atan2: case B::Hypot:
      return Unit::Math;
    case B::Xlogy: case B::Logaddexp: case B::Logaddexp2:
      return Unit::Logs;
    case B::Maximum: case B::Minimum: case B::ThresholdBackward:
      return Unit::Extremum;
    case B::LogicalAnd: case B::LogicalOr: case B::LogicalXor:
      return Unit::Logical;
    case B::GeluBackward: case B::GeluTanhBackward: case B::SiluBackward: case B::HardsigmoidBackward:
    case B::HardswishBackward: case B::SoftplusBackward: case B::LogSigmoidBackward: case B::MishBackward:
    case B::LeakyRelu: case B::LeakyReluSlope: case B::Softshrink: case B::Hardshrink: case B::ShrinkBackward:
      return Unit::Activation;
    case B::BitwiseAnd: case B::BitwiseOr: case B::BitwiseXor: case B::LeftShift: case B::RightShift:
      return Unit::Bitwise;
    case B::FloorDivide: case B::DivTrunc: case B::Remainder: case B::Fmod:
      return Unit::Division;
    case B::Lt: case B::Le: case B::Gt: case B::Ge:
      return Unit::Order;
    case B::Zeta: case B::Gcd: case B::Lcm: case B::Nextafter: case B::Igamma: case B::Igammac:
      return Unit::Special;
    case B::ChebyshevT: case B::ChebyshevU: case B::ChebyshevV: case B::ChebyshevW: case B::HermiteH:
    case B::HermiteHe: case B::LaguerreL: case B::LegendreP:
      return Unit::Polynomial;
    default:
      return ops::rule_of(op) == ops::DtypeRule::Compare ? Unit::Equality : Unit::Arith;
  }
}
constexpr Unit unary_unit(ops::UnaryOp op) {
  using U = ops::UnaryOp;
  switch (op) {  // the special functions (ops/special_math.h), and the binary zeta
    case U::Lgamma: case U::Digamma: case U::I0: case U::I0e: case U::I1: case U::I1e: case U::Erfcx:
      return Unit::Special;
    case U::BesselJ0: case U::BesselJ1: case U::BesselY0: case U::BesselY1: case U::BesselK0: case U::BesselK1:
    case U::BesselK0e: case U::BesselK1e: case U::AiryAi:
      return Unit::Bessel;
    case U::Gelu: case U::GeluTanh: case U::Silu: case U::Hardsigmoid: case U::Hardswish: case U::Softplus:
    case U::LogSigmoid: case U::Mish:
      return Unit::Activation;
    default:
      break;
  }
  if (int(op) <= int(ops::UnaryOp::Sigmoid)) return Unit::Basic;
  if (int(op) >= int(ops::UnaryOp::Tan) && int(op) <= int(ops::UnaryOp::Atanh)) return Unit::Trig;
  if (ops::rule_of(op) == ops::DtypeRule::Predicate) return Unit::Predicate;
  return ops::rule_of(op) == ops::DtypeRule::Float ? Unit::Math : Unit::Rounding;
}

}  // namespace lucid::backend
