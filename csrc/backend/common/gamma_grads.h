// Pathwise (reparameterized) derivatives of the gamma family's samples, shared by the
// CPU and CUDA kernels of ReparamGrad (ops/prims/random.h), in double.
//
// A sample x of a law with CDF F(x; alpha) moves with alpha as dx/dalpha =
// -(dF/dalpha) / (dF/dx): implicit differentiation of F(x; alpha) = u with the uniform u
// held fixed. dF/dalpha has no closed form; the approximations below are the ones of
// Jankowiak and Obermeyer, "Pathwise Derivatives Beyond the Reparameterization Trick"
// (ICML 2018), with their fitted coefficients, region by region as PyTorch evaluates
// them, so lucid's gradients are torch's (to the rounding of the compute type: torch
// evaluates some float32 regions in float).
#pragma once

#include <cmath>

#include "core/half.h"  // (LUCID_HD)
#include "ops/special_math.h"

namespace lucid::backend {

// d x / d alpha for a standard Gamma(alpha) sample x (torch._standard_gamma_grad).
LUCID_HD inline double standard_gamma_grad(double alpha, double x) {
  if (x < 0.8) {
    // The lower incomplete gamma's series: F and dF/dalpha as sums over x^k / k!.
    double term = 1.0, denom = alpha;
    double f_sum = term / denom, f_alpha_sum = term / (denom * denom);
    for (int k = 1; k <= 5; ++k) {
      term *= -x / double(k);
      denom += 1.0;
      f_sum += term / denom;
      f_alpha_sum += term / (denom * denom);
    }
    const double x_alpha = pow(x, alpha), pdf = pow(x, alpha - 1.0) * exp(-x);
    const double f_alpha = (log(x) - ops::special::digamma(alpha)) * x_alpha * f_sum - x_alpha * f_alpha_sum;
    const double g = -f_alpha / pdf;
    return g != g ? 0.0 : g;  // (0 where the series breaks down: x 0)
  }
  if (alpha > 8.0) {  // Rice's saddle-point expansion for large alpha
    if (0.9 * alpha <= x && x <= 1.1 * alpha) {  // (near the mode, its singular point's Taylor form)
      const double a2 = alpha * alpha;
      const double num1 = 1.0 + 24.0 * alpha * (1.0 + 12.0 * alpha);
      const double num2 = 1440.0 * a2 + 6.0 * x * (53.0 - 120.0 * x) - 65.0 * x * x / alpha + alpha * (107.0 + 3600.0 * x);
      return num1 * num2 / (1244160.0 * a2 * a2);
    }
    const double root = sqrt(8.0 * alpha);
    const double near = root / (alpha - x);
    const double far = pow(x - alpha - alpha * log(x / alpha), -1.5);
    const double both = x < alpha ? near - far : near + far;
    const double main = log(x / alpha) * both - sqrt(2.0 / alpha) * (alpha + x) / ((alpha - x) * (alpha - x));
    const double stirling = 1.0 + 1.0 / (12.0 * alpha) * (1.0 + 1.0 / (24.0 * alpha));
    return -stirling * x * main / root;
  }
  // A rational function of u = log(x / alpha) and v = log(alpha), fitted to the gradient.
  constexpr double c[3][8] = {
      {0.16009398, -0.094634809, 0.025146376, -0.0030648343, 1, 0.32668115, 0.10406089, 0.0014179084},
      {0.53487893, 0.1298071, 0.065735949, -0.0015649758, 0.16639465, 0.020070113, -0.0035938915, -0.00058392623},
      {0.040121004, -0.0065914022, -0.0026286047, -0.0013441777, 0.017050642, -0.0021309326, 0.00085092367,
       -1.5247877e-07},
  };
  const double u = log(x / alpha), v = log(alpha);
  double k[8];
  for (int i = 0; i < 8; ++i) k[i] = c[0][i] + u * (c[1][i] + u * c[2][i]);
  const double p = k[0] + v * (k[1] + v * (k[2] + v * k[3]));
  const double q = k[4] + v * (k[5] + v * (k[6] + v * k[7]));
  return exp(p / q);
}

namespace gamma_grads_detail {

// d x / d alpha of a Beta(alpha, beta) sample x near 0, by Taylor expansion.
LUCID_HD inline double beta_alpha_near_0(double x, double alpha, double beta) {
  const double factor = ops::special::digamma(alpha) - ops::special::digamma(alpha + beta) - log(x);
  double term = 1.0, sum = term / alpha * (factor + 1.0 / alpha);
  for (int i = 1; i <= 10; ++i) {
    term *= (double(i) - beta) * x / double(i);
    const double denom = alpha + double(i);
    sum += term / denom * (factor + 1.0 / denom);
  }
  const double g = x * pow(1.0 - x, -beta) * sum;
  return g != g ? 0.0 : g;
}

// d x / d beta of a Beta(alpha, beta) sample x near 0, by Taylor expansion.
LUCID_HD inline double beta_beta_near_0(double x, double alpha, double beta) {
  const double factor = ops::special::digamma(alpha + beta) - ops::special::digamma(beta);
  double term = 1.0, betas = 1.0, dbetas = 0.0, sum = factor / alpha;
  for (int i = 1; i <= 8; ++i) {
    term *= -x / double(i);
    dbetas = dbetas * (beta - double(i)) + betas;
    betas *= beta - double(i);
    sum += term / (alpha + double(i)) * (dbetas + factor * betas);
  }
  const double g = -pow(1.0 - x, 1.0 - beta) * sum;
  return g != g ? 0.0 : g;
}

// d x / d alpha of a Beta(alpha, beta) sample x, alpha and beta both large: Rice's
// saddle-point expansion (near the mean, its singular point's Taylor form).
LUCID_HD inline double beta_alpha_large(double x, double alpha, double beta) {
  const double total = alpha + beta, mean = alpha / total;
  const double std = sqrt(alpha * beta / (total + 1.0)) / total;
  const double b2 = beta * beta;
  if (mean - 0.1 * std <= x && x <= mean + 0.1 * std) {
    const double poly =
        47.0 * x * b2 * b2 +
        alpha * ((43.0 + 20.0 * (16.0 + 27.0 * beta) * x) * b2 * beta +
                 alpha * (3.0 * (59.0 + 180.0 * beta - 90.0 * x) * b2 +
                          alpha * ((453.0 + 1620.0 * beta * (1.0 - x) - 455.0 * x) * beta +
                                   alpha * (8.0 * (1.0 - x) * (135.0 * beta - 11.0)))));
    const double num = (1.0 + 12.0 * alpha) * (1.0 + 12.0 * beta) / (total * total);
    const double den = 12960.0 * alpha * alpha * alpha * b2 * (1.0 + 12.0 * total);
    return num / (1.0 - x) * poly / den;
  }
  const double prefactor = -x / sqrt(2.0 * alpha * beta / total);
  const double stirling = (1.0 + 1.0 / (12.0 * alpha) + 1.0 / (288.0 * alpha * alpha)) *
                          (1.0 + 1.0 / (12.0 * beta) + 1.0 / (288.0 * b2)) /
                          (1.0 + 1.0 / (12.0 * total) + 1.0 / (288.0 * total * total));
  const double axbx = alpha * (x - 1.0) + beta * x;
  const double t1 = (2.0 * alpha * alpha * (x - 1.0) + alpha * beta * (x - 1.0) - x * b2) /
                    (sqrt(2.0 * alpha / beta) * pow(total, 1.5) * axbx * axbx);
  const double t2 = 0.5 * log(alpha / (total * x));
  const double t3 = sqrt(8.0 * alpha * beta / total) / (beta * x + alpha * (x - 1.0));
  const double t4 = pow(beta * log(beta / (total * (1.0 - x))) + alpha * log(alpha / (total * x)), -1.5);
  return stirling * prefactor * (t1 + t2 * (t3 + (x < mean ? t4 : -t4)));
}

}  // namespace gamma_grads_detail

// d x / d alpha of a Beta(alpha, total - alpha) sample x, over 1 - x: the piece a
// Dirichlet's reparameterized gradient is made of (torch._dirichlet_grad).
LUCID_HD inline double dirichlet_grad(double x, double alpha, double total) {
  using namespace gamma_grads_detail;
  const double beta = total - alpha, boundary = total * x * (1.0 - x);
  if (x <= 0.5 && boundary < 2.5) return beta_alpha_near_0(x, alpha, beta);
  if (x >= 0.5 && boundary < 0.75) return -beta_beta_near_0(1.0 - x, beta, alpha);
  if (alpha > 6.0 && beta > 6.0) return beta_alpha_large(x, alpha, beta);
  // A rational correction, fitted in log x, log(alpha / x) and log(total x / alpha), to
  // the analytic approximation x (digamma(total) - digamma(alpha)) / beta.
  constexpr double c[2][3][3][4] = {
      {{{1.003668233, -0.01061107488, -0.0657888334, 0.01201642863},
        {0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033},
        {-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013}},
       {{0.221950385, -0.3187676331, 0.01799915743, 0.01074823814},
        {-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057},
        {0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05}},
       {{-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565},
        {0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181},
        {0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05}}},
      {{{1, -0.02924021934, -0.04438342661, 0.007285809825},
        {0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521},
        {-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149}},
       {{0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273},
        {0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956},
        {-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05}},
       {{0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05},
        {0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05},
        {-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06}}},
  };
  const double u = log(x), a = log(alpha) - u, b = log(total) - a;
  const double pow_u[3] = {1.0, u, u * u}, pow_a[3] = {1.0, a, a * a};
  double p = 0.0, q = 0.0;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      const double ua = pow_u[i] * pow_a[j];
      p += ua * (c[0][i][j][0] + b * (c[0][i][j][1] + b * (c[0][i][j][2] + b * c[0][i][j][3])));
      q += ua * (c[1][i][j][0] + b * (c[1][i][j][1] + b * (c[1][i][j][2] + b * c[1][i][j][3])));
    }
  return p / q * x * (ops::special::digamma(total) - ops::special::digamma(alpha)) / beta;
}

}  // namespace lucid::backend
