# The training tool's tests (tests/training/test_training_*.cpp) run in specd_test_model and need the
# training library; training/ is added before tests/, so the target exists here.
if(TARGET specd_training AND TARGET specd_test_model)
  target_link_libraries(specd_test_model PRIVATE specd_training)
endif()
