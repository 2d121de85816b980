// ctensor/cpp/plan.hpp: ct::Plan, an owned CTPlan (one NN call shape, primitives created once), and the plan cache.
#ifndef CTENSOR_CPP_PLAN_HPP_
#define CTENSOR_CPP_PLAN_HPP_

#include "../ctensor_nn.h"
#include "dtype.hpp"
#include "error.hpp"
#include "nn.hpp"
#include "nn_options.hpp"
#include "tensor_view.hpp"
#include "workspace.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace ct {

/* ------------------------------------------------------------------------ */
/* Plan: an owned CTPlan                                                     */
/* ------------------------------------------------------------------------ */

/** A move-only owner of a CTPlan (ct_plan_destroy in the destructor): one
 *  NN op for fixed options, shapes, strides, dtypes, device and thread
 *  count, with its backend primitives created once. Tensor lists are the
 *  op's ct_<op> tensor arguments in order, nullptr for an absent optional
 *  one, e.g. {&x, &w, &bias, &y} or {&x, &w, nullptr, &y} for conv2d. The
 *  static factories (Plan::conv2d(x, w, &bias, y, opts), ...) take them as
 *  the out= forms do. execute() is const and thread-safe (one workspace per
 *  thread). */
class Plan {
 public:
  /** No plan. */
  Plan() noexcept : plan_(nullptr), op_(-1), num_tensors_(0), device_(cpu()) {}
  /** ct_plan_create(op, desc, tensors, stream); @p desc points at the op's
   *  C descriptor (CTConv2dDesc for conv2d, ...). */
  Plan(int32_t op, const void* desc, const std::vector<const TensorView*>& tensors,
       void* stream = nullptr)
      : plan_(nullptr),
        op_(op),
        num_tensors_(detail::count32(tensors.size(), "ct::Plan")),
        device_(detail::device_of(tensors)) {
    std::vector<const CTensor*> c = detail::c_tensors(tensors);
    CTPlan* p = nullptr;
    check(ct_plan_create(op, desc, c.empty() ? nullptr : c.data(), num_tensors_, stream, &p));
    plan_ = p;
  }
  /** A plan for NN op @p op with its options (ct::Conv2dOptions, ...; any
   *  ct::NNDesc); throws CT_ERR_INVALID_ARGUMENT if @p op takes another
   *  descriptor (CTOpInfo.desc_type). */
  Plan(int32_t op, const NNDesc& desc, const std::vector<const TensorView*>& tensors,
       void* stream = nullptr)
      : Plan(op, detail::nn_desc_for(op, desc, "ct::Plan"), tensors, stream) {}
  /** Take ownership of @p plan, created for @p op with @p num_tensors tensors on @p device. */
  Plan(CTPlan* plan, int32_t op, int32_t num_tensors, CTDevice device = cpu()) noexcept
      : plan_(plan), op_(op), num_tensors_(num_tensors), device_(device) {}
  /** ct_plan_destroy. */
  ~Plan() { ct_plan_destroy(plan_); }
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  /** Takes the plan; @p o becomes empty. */
  Plan(Plan&& o) noexcept
      : plan_(o.plan_), op_(o.op_), num_tensors_(o.num_tensors_), device_(o.device_) {
    o.plan_ = nullptr;
  }
  /** Destroys this plan and takes @p o's; @p o becomes empty. */
  Plan& operator=(Plan&& o) noexcept {
    if (this != &o) {
      ct_plan_destroy(plan_);
      plan_ = o.plan_;
      op_ = o.op_;
      num_tensors_ = o.num_tensors_;
      device_ = o.device_;
      o.plan_ = nullptr;
    }
    return *this;
  }

  /** The CTPlan (NULL when empty). */
  CTPlan* get() const noexcept { return plan_; }
  /** Give up ownership: returns the CTPlan (the caller destroys it) and becomes empty. */
  CTPlan* release() noexcept {
    CTPlan* p = plan_;
    plan_ = nullptr;
    return p;
  }
  /** Destroy the plan now (empty afterwards). */
  void reset() noexcept {
    ct_plan_destroy(plan_);
    plan_ = nullptr;
  }
  /** True unless empty. */
  explicit operator bool() const noexcept { return plan_ != nullptr; }
  /** The op id it was created for. */
  int32_t op() const noexcept { return op_; }
  /** The number of tensor arguments of its op. */
  int32_t num_tensors() const noexcept { return num_tensors_; }
  /** The device of its tensors (where execute() allocates a workspace). */
  CTDevice device() const noexcept { return device_; }

  /** Bytes of workspace every execute() needs (ct_plan_workspace_size). */
  size_t workspace_size() const {
    size_t n = 0;
    check(ct_plan_workspace_size(plan_, &n));
    return n;
  }
  /** Run on new data with the caller's buffer: exactly ct_plan_execute. */
  void execute(const std::vector<const TensorView*>& tensors, void* workspace, size_t workspace_bytes,
               void* stream = nullptr) const {
    std::vector<const CTensor*> c = detail::c_tensors(tensors);
    check(ct_plan_execute(plan_, c.empty() ? nullptr : c.data(),
                          detail::count32(c.size(), "ct::Plan::execute"),
                          workspace, workspace_bytes, stream));
  }
  /** Run on new data with the caller's Workspace, grown to workspace_size(). */
  void execute(const std::vector<const TensorView*>& tensors, Workspace& ws,
               void* stream = nullptr) const {
    const size_t n = workspace_size();
    if (n == 0) {
      execute(tensors, nullptr, 0, stream);
      return;
    }
    if (!same_device(ws.device(), device_)) {
      if (ws.size() != 0)
        detail::fail(CT_ERR_DEVICE_MISMATCH, "ct::Plan::execute: the workspace is on device " +
                                                 detail::device_str(ws.device()) +
                                                 ", the plan on " + detail::device_str(device_));
      ws = Workspace(n, device_);
    }
    ws.reserve(n);
    execute(tensors, ws.data(), ws.size(), stream);
  }
  /** Run on new data with a workspace allocated for the call. */
  void execute(const std::vector<const TensorView*>& tensors, void* stream = nullptr) const {
    Workspace ws(workspace_size(), device_);
    execute(tensors, ws.data(), ws.size(), stream);
  }

  /** Plans for each op, tensors as in its out= form. */
  static Plan matmul(const TensorView& a, const TensorView& b, const TensorView* bias,
                     const TensorView& out, const MatmulOptions& opts = MatmulOptions(),
                     void* stream = nullptr) {
    return Plan(CT_OP_MATMUL, opts, {&a, &b, bias, &out}, stream);
  }
  /** See matmul. */
  static Plan conv2d(const TensorView& x, const TensorView& w, const TensorView* bias,
                     const TensorView& y, const Conv2dOptions& opts = Conv2dOptions(),
                     void* stream = nullptr) {
    return Plan(CT_OP_CONV2D, opts, {&x, &w, bias, &y}, stream);
  }
  /** See matmul. */
  static Plan conv2d_backward_data(const TensorView& dy, const TensorView& w, const TensorView& dx,
                                   const Conv2dOptions& opts = Conv2dOptions(),
                                   void* stream = nullptr) {
    return Plan(CT_OP_CONV2D_BACKWARD_DATA, opts, {&dy, &w, &dx}, stream);
  }
  /** See matmul. */
  static Plan conv2d_backward_weight(const TensorView& x, const TensorView& dy, const TensorView& dw,
                                     const TensorView* dbias,
                                     const Conv2dOptions& opts = Conv2dOptions(),
                                     void* stream = nullptr) {
    return Plan(CT_OP_CONV2D_BACKWARD_WEIGHT, opts, {&x, &dy, &dw, dbias}, stream);
  }
  /** See matmul. */
  static Plan max_pool2d(const TensorView& x, const TensorView& y, const TensorView* indices,
                         const Pool2dOptions& opts, void* stream = nullptr) {
    return Plan(CT_OP_MAX_POOL2D, opts, {&x, &y, indices}, stream);
  }
  /** See matmul. */
  static Plan max_pool2d_backward(const TensorView& dy, const TensorView& indices,
                                  const TensorView& dx, const Pool2dOptions& opts,
                                  void* stream = nullptr) {
    return Plan(CT_OP_MAX_POOL2D_BACKWARD, opts, {&dy, &indices, &dx}, stream);
  }
  /** See matmul. */
  static Plan avg_pool2d(const TensorView& x, const TensorView& y, const Pool2dOptions& opts,
                         void* stream = nullptr) {
    return Plan(CT_OP_AVG_POOL2D, opts, {&x, &y}, stream);
  }
  /** See matmul. */
  static Plan avg_pool2d_backward(const TensorView& dy, const TensorView& dx,
                                  const Pool2dOptions& opts, void* stream = nullptr) {
    return Plan(CT_OP_AVG_POOL2D_BACKWARD, opts, {&dy, &dx}, stream);
  }
  /** See matmul. */
  static Plan batch_norm(const TensorView& x, const TensorView& mean, const TensorView& var,
                         const TensorView* scale, const TensorView* shift, const TensorView& y,
                         const BatchNormOptions& opts = BatchNormOptions(), void* stream = nullptr) {
    return Plan(CT_OP_BATCH_NORM, opts, {&x, &mean, &var, scale, shift, &y}, stream);
  }
  /** See matmul. */
  static Plan batch_norm_training(const TensorView& x, const TensorView* scale,
                                  const TensorView* shift, const TensorView& y,
                                  const TensorView& mean, const TensorView& invstd,
                                  const BatchNormOptions& opts = BatchNormOptions(),
                                  void* stream = nullptr) {
    return Plan(CT_OP_BATCH_NORM_TRAINING, opts, {&x, scale, shift, &y, &mean, &invstd}, stream);
  }
  /** See matmul. */
  static Plan batch_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& mean,
                                  const TensorView& invstd, const TensorView* scale,
                                  const TensorView& dx, const TensorView* dscale,
                                  const TensorView* dshift,
                                  const BatchNormOptions& opts = BatchNormOptions(),
                                  void* stream = nullptr) {
    return Plan(CT_OP_BATCH_NORM_BACKWARD, opts,
                {&x, &dy, &mean, &invstd, scale, &dx, dscale, dshift}, stream);
  }
  /** See matmul. */
  static Plan layer_norm(const TensorView& x, const TensorView* scale, const TensorView* shift,
                         const TensorView& y, const TensorView* mean, const TensorView* rstd,
                         const LayerNormOptions& opts = LayerNormOptions(), void* stream = nullptr) {
    return Plan(CT_OP_LAYER_NORM, opts, {&x, scale, shift, &y, mean, rstd}, stream);
  }
  /** See matmul. */
  static Plan layer_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& mean,
                                  const TensorView& rstd, const TensorView* scale,
                                  const TensorView& dx, const TensorView* dscale,
                                  const TensorView* dshift,
                                  const LayerNormOptions& opts = LayerNormOptions(),
                                  void* stream = nullptr) {
    return Plan(CT_OP_LAYER_NORM_BACKWARD, opts,
                {&x, &dy, &mean, &rstd, scale, &dx, dscale, dshift}, stream);
  }

 private:
  CTPlan* plan_;
  int32_t op_;
  int32_t num_tensors_;
  CTDevice device_;
};

/** Process-wide counters of the plan cache behind the direct calls
 *  (ct_plan_cache_info). */
inline CTPlanCacheInfo plan_cache_info() {
  CTPlanCacheInfo info;
  std::memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  check(ct_plan_cache_info(&info));
  return info;
}

/** Keep at most @p capacity cached plans (0 disables the cache). */
inline void plan_cache_set_capacity(int64_t capacity) {
  check(ct_plan_cache_set_capacity(capacity));
}

}  // namespace ct

#endif  // CTENSOR_CPP_PLAN_HPP_
