/// Say hello.
pub async fn hello(ctx: &Ctx) -> Result<Vec<Message>, Error> {
    Ok(vec![Message::user(ctx.hello())])
}
#[doc(hidden)]
#[::groundkit_core::__private::linkme::distributed_slice(
    ::groundkit_core::__private::PROMPTS
)]
#[linkme(crate = ::groundkit_core::__private::linkme)]
static __GROUNDKIT_PROMPT_HELLO: ::groundkit_core::__private::PromptSpec = {
    #[allow(dead_code)]
    fn __groundkit_checks() {
        ::groundkit_core::__private::assert_context::<Ctx>();
        ::groundkit_core::__private::assert_prompt_return::<
            Result<Vec<Message>, Error>,
        >();
    }
    #[allow(unused_variables)]
    fn __groundkit_handler<'a>(
        context: &'a ::groundkit_core::__private::ErasedContext,
        arguments: ::groundkit_core::__private::serde_json::Value,
        call: ::groundkit_core::__private::RequestContext,
    ) -> ::groundkit_core::__private::BoxFuture<
        'a,
        ::groundkit_core::__private::core::result::Result<
            ::groundkit_core::__private::std::vec::Vec<
                ::groundkit_core::__private::Message,
            >,
            ::groundkit_core::__private::Error,
        >,
    > {
        ::groundkit_core::__private::std::boxed::Box::pin(async move {
            let context = ::groundkit_core::__private::downcast_context::<Ctx>(context)?;
            let _ = arguments;
            ::groundkit_core::__private::PromptReturn::into_messages(
                hello(context).await,
            )
        })
    }
    ::groundkit_core::__private::PromptSpec::new::<
        ::groundkit_core::__private::ReadOnly,
    >(::groundkit_core::__private::PromptParts {
        name: "hello",
        title: ::groundkit_core::__private::core::option::Option::None,
        icon: ::groundkit_core::__private::core::option::Option::None,
        summary: "Say hello.",
        description: "Say hello.",
        route: ::groundkit_core::__private::RestRoute {
            method: ::groundkit_core::__private::HttpMethod::Post,
            path: "/prompts/hello",
            params: &[],
        },
        context: ::groundkit_core::__private::type_id::<Ctx>,
        context_name: ::groundkit_core::__private::core::any::type_name::<Ctx>,
        arguments_schema: ::groundkit_core::__private::no_params_schema,
        completers: &[],
        handler: __groundkit_handler,
    })
};
